import BLE
import Bridge
import Events
import Foundation
import PeerProtocol
import Synchronization
import Testing
import StreamIO
import UCIHost

@testable import Simulation

/// A misbehaving body on the virtual air: connects to its victim again and again (every half
/// second while it has no link) and sends something broken on each link the victim reads.
private final class Mallory: Sendable {
    let world: World
    let body: Int
    let victim: BLEAddress
    private let state = Mutex((step: 0, attacked: [LinkID](), opened: [LinkID](), closed: [LinkID]()))

    static let attacks: [[UInt8]] = [
        [0xDE, 0xAD, 0xBE, 0xEF],  // not a frame
        [0x01, 0x04, 0xFF, 0xFF] + [UInt8](repeating: 0x41, count: 64),  // card claiming 64 KiB
        PeerMessage.cardAck(bumpID: 1).encoded(),  // not hello first
        PeerMessage.hello(.init(peerID: PeerID(.max), group: 1, name: "x")).encoded(),  // breaks the role rule
        PeerMessage.hello(.init(peerID: PeerID(0), group: 1, name: "m")).encoded()
            + [0x01, 0x02, 0x01, 0x00, 0x00],  // valid hello glued to junk in one SDU
    ]

    init(world: World, body: Int, victim: Int) {
        self.world = world
        self.body = body
        self.victim = World.address(ofBody: victim)
        world.attachEndpoint(body: body) { [weak self] event in self?.record(event) }
    }

    private func record(_ event: BLEEvent) {
        state.withLock { s in
            if case .linkOpened(let link, _, true) = event { s.opened.append(link) }
            if case .linkClosed(let link) = event { s.closed.append(link) }
        }
    }

    /// Called before every simulation step: every half second, connect if no link is open,
    /// otherwise send the next attack on the open link.
    func act() {
        let (step, sent, openLink) = state.withLock { s in
            s.step += 1
            return (s.step, s.attacked.count, s.opened.last.flatMap { s.closed.contains($0) ? nil : $0 })
        }
        guard step % 10 == 0, sent < Self.attacks.count else { return }
        if let openLink {
            try? world.send(Self.attacks[sent], on: openLink, from: body)
            state.withLock { $0.attacked.append(openLink) }
        } else {
            _ = world.connect(from: body, to: victim)
        }
    }

    var attackedLinks: [LinkID] { state.withLock { $0.attacked } }
    var linksClosedByVictim: [LinkID] { state.withLock { $0.closed } }
}

@Suite(.serialized) struct RobustnessTests {
    @Test func hostilePeerIsCutOffAndHonestPeersStillBump() async throws {
        let scenario = try Scenario.decode(
            Data(
                """
                { "name": "hostile", "duration": 20, "nodes": [
                  { "name": "victim", "path": [[0, 0, 0]] },
                  { "name": "honest", "path": [[0, 2, 0], [5, 0.03, 0], [8, 0.03, 0], [9, 1, 0]] },
                  { "name": "mallory", "external": true, "path": [[0, 1, 1]] } ] }
                """.utf8))
        let (driver, output) = fastDriver(scenario, ranges: false)
        let mallory = Mallory(world: driver.world, body: 2, victim: 0)
        try await driver.run(until: { mallory.act(); return false })

        let events = try parse(output.lines)
        let ids = driver.identities.mapValues(\.peerID.description)
        let bumps = events.filter { $0["type"] as? String == "bump" }
        #expect(bumps.count == 2)
        #expect(bumps.contains { $0["node"] as? String == ids["victim"] && $0["peer"] as? String == ids["honest"] })
        #expect(bumps.contains { $0["node"] as? String == ids["honest"] && $0["peer"] as? String == ids["victim"] })
        // Every attack ended with the victim closing the link; the node kept running throughout.
        // Between attacks the victim closed Mallory's new links unread while its address was
        // backed off (issue 35).
        #expect(mallory.attackedLinks.count == Mallory.attacks.count)
        #expect(Set(mallory.attackedLinks).isSubset(of: mallory.linksClosedByVictim))
        #expect(mallory.linksClosedByVictim.count > Mallory.attacks.count)
    }

    /// The two-rig VM test found this: a controlee whose discovery is wedged never hears its
    /// controller's advert, only its `hello` over the link the controller opens. It must still
    /// range (the agreed session names the controller's UWB address), stay with the peer, and bump.
    @Test func controleeThatHearsNoAdvertsStillRangesAndBumps() async throws {
        let scenario = try Scenario.decode(
            Data(
                """
                { "name": "deaf-controlee", "duration": 14, "nodes": [
                  { "name": "one", "path": [[0, 0, 0]] },
                  { "name": "two", "path": [[0, 1.5, 0], [6, 1.5, 0], [9, 0.03, 0], [11, 0.03, 0], [12, 1.5, 0]] } ] }
                """.utf8))
        let ids = peerIDs(of: scenario)
        let controlee = ids["one"]! > ids["two"]! ? "one" : "two"
        let controller = controlee == "one" ? "two" : "one"
        let (driver, output) = fastDriver(scenario, ranges: true)
        driver.world.deafen(body: driver.world.bodyIndex(named: controlee)!)
        try await driver.run()

        let events = try parse(output.lines).filter { $0["node"] as? String == ids[controlee] }
        let ofController = events.filter { $0["peer"] as? String == ids[controller] }
        #expect(ofController.first?["type"] as? String == "peer.found")
        #expect(ofController.first?["rssi"] is NSNull, "found through the link, not an advert")
        #expect(ofController.count { $0["type"] as? String == "range" && $0["status"] as? String == "OK" } > 50)
        #expect(ofController.count { $0["type"] as? String == "bump" } == 1)
        #expect(!ofController.contains { $0["type"] as? String == "peer.lost" })
    }

    /// The two-rig VM test found this: an LE connection that the kernel never completes (it
    /// would give up only after 40 s). The initiator abandons it after `connectTimeoutMilliseconds`
    /// and connects again; both sides then range and bump.
    @Test func aConnectionThatNeverCompletesIsAbandonedAndTriedAgain() async throws {
        let scenario = try Scenario.decode(
            Data(
                """
                { "name": "stalled-connect", "duration": 22, "nodes": [
                  { "name": "one", "path": [[0, 0, 0]] },
                  { "name": "two", "path": [[0, 1.5, 0], [14, 1.5, 0], [17, 0.03, 0], [19, 0.03, 0], [20, 1.5, 0]] } ] }
                """.utf8))
        let ids = peerIDs(of: scenario)
        let initiator = ids["one"]! < ids["two"]! ? "one" : "two"
        let other = initiator == "one" ? "two" : "one"
        let (driver, output) = fastDriver(scenario, ranges: true)
        driver.world.stallConnections(from: driver.world.bodyIndex(named: initiator)!, count: 1)
        try await driver.run()

        let events = try parse(output.lines)
        for (node, peer) in [(initiator, other), (other, initiator)] {
            let about = events.filter { $0["node"] as? String == ids[node] && $0["peer"] as? String == ids[peer] }
            #expect(about.count { $0["type"] as? String == "range" && $0["status"] as? String == "OK" } > 30, "\(node) ranging")
            #expect(about.count { $0["type"] as? String == "bump" } == 1, "\(node) bumping")
            #expect(!about.contains { $0["type"] as? String == "peer.lost" }, "\(node) keeps its peer")
        }
        // Nothing before the attempt was abandoned: the first range comes after the timeout.
        let firstRange = events.first { $0["type"] as? String == "range" }?["ts"] as? String
        #expect(firstRange.map { $0 >= "2026-01-01T00:00:10" } == true)
    }

    /// An adapter powered off for two seconds mid-ranging (the two-rig VM does it through mgmt):
    /// its node says so in `device` events, keeps the peer, and ranges again once it is back.
    @Test func anAdapterPowerCycleIsReportedAndRangingResumes() async throws {
        let scenario = try Scenario.decode(
            Data(
                """
                { "name": "power-cycle", "duration": 16, "nodes": [
                  { "name": "one", "path": [[0, 0, 0]] }, { "name": "two", "path": [[0, 1.5, 0]] } ] }
                """.utf8))
        let ids = peerIDs(of: scenario)
        let (driver, output) = fastDriver(scenario, ranges: true)
        let two = driver.world.bodyIndex(named: "two")!
        try await driver.run(until: {
            switch driver.world.nowMilliseconds {
            case 6_000: driver.world.setAdapterPowered(body: two, on: false)
            case 8_000: driver.world.setAdapterPowered(body: two, on: true)
            default: break
            }
            return false
        })

        let events = try parse(output.lines).filter { $0["node"] as? String == ids["two"] }
        let ble = events.indices.filter { events[$0]["type"] as? String == "device" && events[$0]["radio"] as? String == "ble" }
        #expect(ble.map { events[$0]["state"] as? String } == ["ready", "unavailable", "ready"])
        guard ble.count == 3 else { return }
        let okRanges = events.indices.filter { events[$0]["type"] as? String == "range" && events[$0]["status"] as? String == "OK" }
        #expect(okRanges.contains { $0 < ble[1] })
        #expect(okRanges.contains { $0 > ble[2] }, "ranging resumed after the power came back")
        #expect(!events.contains { $0["type"] as? String == "peer.lost" })
    }

    /// `nearby-bridge run --uwb tcp:… --ble world:…` in miniature: a bridge whose UWB board and
    /// air are a world server reached over loopback TCP, with wall-clock time.
    @Test(.timeLimit(.minutes(1))) func rangesAgainstAWorldServerOverTCP() async throws {
        var options = SimulationDriver.Options()
        options.speed = 5
        options.duration = 30
        let worldEvents = CollectedEvents()
        let driver = SimulationDriver(
            scenario: try Scenario.builtIn("world"), options: options,
            events: EventStream(output: worldEvents, includesRanges: false), logger: quietLogger)
        let server = try WorldServer(world: driver.world, host: "127.0.0.1", uwbBasePort: 0, airPort: 0, logger: quietLogger)
        defer { server.close() }
        let world = Task { try await driver.run() }

        let output = CollectedEvents()
        let node = BridgeNode(
            identity: NodeIdentity(
                peerID: PeerID(0xFFFF_0000_0000_0001), name: "field-rig", group: 1, card: ProfileCard(name: "Field"),
                uwbShortAddress: 0x4242),
            config: BridgeConfig(),
            uwbTransport: try StreamConnection.connect(host: "127.0.0.1", port: server.endpoints[0].uwbPort),
            ble: try RemoteAirAdapter(host: "127.0.0.1", port: server.airPort, body: "field-rig"),
            events: EventStream(output: output, includesRanges: true), time: SystemClock(), logger: quietLogger,
            seed: 7)
        try await node.start()
        let loop = Task { await node.run() }
        while !output.lines.contains(where: { $0.contains(#""type":"bump""#) }), !world.isCancelled {
            node.tick()
            try await Task.sleep(for: .milliseconds(100))
        }
        await node.stop()
        await loop.value
        // The goodbye reaches Alice with the world's next step.
        for _ in 0..<100 where !worldEvents.lines.contains(where: { $0.contains(#""reason":"peer-ended""#) }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        world.cancel()

        let events = try parse(output.lines)
        #expect(events.first?["backend"] as? String == "tcp:127.0.0.1:\(server.endpoints[0].uwbPort)")
        #expect((events.first?["detail"] as? [String: String])?["vendor"] == "4e42565700")
        #expect(events.contains { $0["type"] as? String == "peer.found" && $0["name"] as? String == "alice" })
        #expect(events.contains { $0["type"] as? String == "range" && $0["status"] as? String == "OK" })
        let bump = events.first { $0["type"] as? String == "bump" }
        #expect((bump?["card"] as? [String: Any])?["name"] as? String == "Alice")
        // Alice, in the world process, reported the same bump.
        let worldBumps = try parse(worldEvents.lines).filter { $0["type"] as? String == "bump" }
        #expect(worldBumps.contains { $0["peer"] as? String == "ffff000000000001" && $0["bump_id"] as? Int == bump?["bump_id"] as? Int })
        // Stopping said goodbye: the world's peers report the rig as ended, not timed out.
        let lost = try parse(worldEvents.lines).filter { $0["type"] as? String == "peer.lost" && $0["peer"] as? String == "ffff000000000001" }
        #expect(!lost.isEmpty)
        #expect(lost.allSatisfy { $0["reason"] as? String == "peer-ended" })
    }

    /// Unplug mid-ranging: a `device` event says so, peers stay, and once the board is back the
    /// sessions are re-created with the agreed parameters and ranging resumes.
    /// Unicast as a controlee (a high peer id), and as the controller of a one-to-many session
    /// (a low id, four controlees a session): losing the board with a shared session running
    /// once crashed the node (an exclusive access conflict in the session bookkeeping).
    @Test(.timeLimit(.minutes(1)), arguments: [(UInt64(0xFFFF_0000_0000_0002), 1), (UInt64(2), 4)])
    func rangingResumesAfterTheBoardComesBack(peerID: UInt64, controleesPerSession: Int) async throws {
        let rig = try await WorldRig(peerID: peerID, controleesPerSession: controleesPerSession)
        let firstRange = try await rig.waitFor(#""status":"OK""#, after: 0)
        rig.unplug()
        let removed = try await rig.waitFor(#""state":"removed""#, after: firstRange)
        let ready = try await rig.waitFor(#""state":"ready""#, after: removed)
        let resumed = try await rig.waitFor(#""status":"OK""#, after: ready)
        let events = try await rig.stop()

        #expect(events[removed]["radio"] as? String == "uwb")
        #expect(events[ready]["radio"] as? String == "uwb")
        #expect(resumed > ready)
        #expect(!events.contains { $0["type"] as? String == "peer.lost" })
        #expect(events.filter { $0["type"] as? String == "peer.found" }.count == Set(events.compactMap { $0["type"] as? String == "peer.found" ? $0["peer"] as? String : nil }).count)
    }

    /// The board is back but its answer to CORE_DEVICE_RESET goes missing (issue 16: "came back
    /// but did not come up", no command for 40 s and more). Lost once: the host sends the reset
    /// again and the board comes up. Lost every time on that connection: the bring-up fails,
    /// the node says `error`, closes the board and reopens it after a back-off, and the fresh
    /// connection comes up. Either way ranging resumes with the same peers.
    @Test(.timeLimit(.minutes(1)), arguments: [1, Int.max])
    func rangingResumesWhenTheResetAnswerIsLostAfterAReconnect(lost: Int) async throws {
        let rig = try await WorldRig(peerID: 0xFFFF_0000_0000_0002) { attempt, connection in
            attempt == 1 ? LosingAnswers(connection, groupID: 0, opcodeID: 0, count: lost) : connection as any UCITransport
        }
        let firstRange = try await rig.waitFor(#""status":"OK""#, after: 0)
        rig.unplug()
        let removed = try await rig.waitFor(#""state":"removed""#, after: firstRange)
        let ready = try await rig.waitFor(#""state":"ready""#, after: removed)
        let resumed = try await rig.waitFor(#""status":"OK""#, after: ready)
        let events = try await rig.stop()

        let states = events[removed...ready].filter { $0["type"] as? String == "device" && $0["radio"] as? String == "uwb" }
            .compactMap { $0["state"] as? String }
        #expect(states == (lost == 1 ? ["removed", "ready"] : ["removed", "error", "removed", "ready"]))
        #expect(resumed > ready)
        #expect(!events.contains { $0["type"] as? String == "peer.lost" })
    }
}
