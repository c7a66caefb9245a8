import Bridge
import Events
import Foundation
import Synchronization
import Testing
import UCI
import UCIHost

@testable import Simulation

/// A node that controls several peers ranges with them through one-to-many sessions: checked on
/// the UCI commands its (virtual) board receives and on the events it writes.
@Suite(.serialized) struct OneToManyTests {
    /// Session management is under test, not the air: on the shared air the peers' own sessions
    /// with each other cost the hub's session some rounds, and counts of rounds would measure that.
    static var privateAir: RadioModel {
        var radio = RadioModel()
        radio.sharedAir = false
        return radio
    }

    /// The UCI commands a node's host sends its board, in order.
    final class CommandLog: UCITransport {
        private let inner: any UCITransport
        private let state = Mutex<(decoder: UCIStreamDecoder, commands: [UCICommand])>((UCIStreamDecoder(), []))
        var description: String { inner.description }
        var commands: [UCICommand] { state.withLock { $0.commands } }

        init(_ inner: any UCITransport) { self.inner = inner }

        func write(_ bytes: [UInt8]) async throws {
            state.withLock { s in
                s.decoder.append(bytes)
                while let message = try? s.decoder.next() {
                    if let command = try? UCICommand(message) { s.commands.append(command) }
                }
            }
            try await inner.write(bytes)
        }
        func read() async throws -> [UInt8]? { try await inner.read() }
        func close() { inner.close() }
    }

    /// Five nodes; the one with the lowest peer id (the UWB controller of every pair) stands in the
    /// middle with a board that runs one session, the others 1.5 m around it. With `aPeerLeaves`
    /// the first of them walks out of Bluetooth range at 20 s. Every board speaks `uci`.
    func run(controleesPerSession: Int, aPeerLeaves: Bool = false, uci: BoardUCI = .v2_0) async throws -> (
        commands: [UCICommand], events: [[String: Any]], hub: String, ids: [String: String], addresses: [String: UInt16],
        leaver: String?
    ) {
        let names = ["n0", "n1", "n2", "n3", "n4"]
        var scenario = Scenario(
            name: "one-to-many", duration: 40, group: 1, radio: Self.privateAir,
            nodes: names.map { Scenario.Node(name: $0, path: [.init(t: 0, x: 0, y: 0)]) })
        for index in scenario.nodes.indices { scenario.nodes[index].uci = uci }
        let ids = peerIDs(of: scenario)
        let hub = try #require(names.min { UInt64(ids[$0]!, radix: 16)! < UInt64(ids[$1]!, radix: 16)! })
        let leaver = aPeerLeaves ? names.first { $0 != hub } : nil
        var angle = 0.0
        for index in scenario.nodes.indices {
            guard scenario.nodes[index].name != hub else {
                scenario.nodes[index].uwbSessions = 1
                continue
            }
            angle += .pi / 2
            let (x, y) = (1.5 * cos(angle), 1.5 * sin(angle))
            scenario.nodes[index].path = [.init(t: 0, x: x, y: y)]
            if scenario.nodes[index].name == leaver { scenario.nodes[index].path += [.init(t: 20, x: x, y: y), .init(t: 22, x: 60 * x, y: 60 * y)] }
        }
        let log = Mutex<CommandLog?>(nil)
        var options = SimulationDriver.Options()
        options.speed = nil
        options.epochMilliseconds = fixedEpoch
        options.bridge.controleesPerSession = controleesPerSession
        options.instrument = { name, uwb, ble, _ in
            guard name == hub else { return (uwb, ble) }
            let logged = CommandLog(uwb)
            log.withLock { $0 = logged }
            return (logged, ble)
        }
        let output = CollectedEvents()
        let driver = SimulationDriver(
            scenario: scenario, options: options, events: EventStream(output: output, includesRanges: true), logger: quietLogger)
        // The commands before the run ends: stopping the nodes releases every place.
        let beforeTheEnd = Mutex<[UCICommand]?>(nil)
        let world = driver.world
        try await driver.run {
            if world.nowMilliseconds >= 39_000, beforeTheEnd.withLock({ $0 == nil }) {
                let commands = log.withLock { $0 }?.commands ?? []
                beforeTheEnd.withLock { $0 = commands }
            }
            return false
        }
        let commands = try #require(beforeTheEnd.withLock { $0 })
        return (
            commands, try parse(output.lines), driver.identities[hub]!.peerID.description, driver.identities.mapValues(\.peerID.description),
            driver.identities.mapValues(\.uwbShortAddress), leaver
        )
    }

    /// On either UCI generation: a UCI 1.1 board names the session by its id and reports the
    /// list only in its notification; the host follows.
    @Test(arguments: BoardUCI.allCases) func fourPeersRangeThroughTheOneSessionTheBoardAllows(uci: BoardUCI) async throws {
        let (commands, events, hub, ids, addresses, _) = try await run(controleesPerSession: 4, uci: uci)
        let peers = ids.filter { $0.value != hub }
        #expect(peers.count == 4)
        // One SESSION_INIT, configured one-to-many; the other three controlees added to its list.
        let inits = commands.compactMap { if case .sessionInit(let id, _) = $0 { id } else { nil } }
        #expect(inits.count == 1)
        // Later commands name the session by the id on 1.1, by the board's handle on 2.0.
        let tokens = Set(commands.compactMap { if case .setAppConfig(let token, _) = $0 { token } else { nil } })
        #expect(tokens.count == 1 && (tokens == Set(inits)) == (uci == .v1_1))
        let configs = commands.compactMap { if case .setAppConfig(_, let tlvs) = $0 { tlvs } else { nil } }
        #expect(configs.count == 1)
        #expect(configs.first?.contains(.multiNodeMode(.oneToMany)) == true)
        var added: [UInt16] = []
        for case .updateControllerMulticastList(_, .add, let controlees) in commands { added += controlees.map(\.shortAddress) }
        let peerAddresses = Set(peers.keys.map { addresses[$0]! })
        #expect(added.count == 3 && Set(added).isSubset(of: peerAddresses))
        // Every peer's distance, from the hub's side and from the peer's.
        for (_, peer) in peers {
            let measured = events.filter {
                $0["type"] as? String == "range" && $0["node"] as? String == hub && $0["peer"] as? String == peer && $0["distance"] is Double
            }
            // 40 s at 10 Hz, less the first seconds of discovery: all the time, not a turn now and then.
            #expect(measured.count > 250, "hub ranging \(peer)")
            let distances = measured.compactMap { $0["distance"] as? Double }
            #expect(abs(distances.reduce(0, +) / Double(distances.count) - 1.5) < 0.3, "hub ranging \(peer)")
            let back = events.filter {
                $0["type"] as? String == "range" && $0["node"] as? String == peer && $0["peer"] as? String == hub && $0["distance"] is Double
            }
            #expect(back.count > 250, "\(peer) ranging the hub")
        }
    }

    @Test func aPeerThatLeavesIsTakenOffTheList() async throws {
        let (commands, events, hub, ids, addresses, leaving) = try await run(controleesPerSession: 4, aPeerLeaves: true)
        let leaver = try #require(leaving)
        var removed: [UInt16] = []
        for case .updateControllerMulticastList(_, .remove, let controlees) in commands { removed += controlees.map(\.shortAddress) }
        let lost = events.contains { $0["type"] as? String == "peer.lost" && $0["node"] as? String == hub && $0["peer"] as? String == ids[leaver] }
        // The leaver is taken off the list; the session goes on for the others.
        #expect(removed == [addresses[leaver]!])
        #expect(!commands.contains { if case .sessionDeinit = $0 { true } else { false } })
        #expect(lost)
        // The others keep ranging after it left.
        let late = events.filter {
            $0["type"] as? String == "range" && $0["node"] as? String == hub && $0["distance"] is Double
                && ($0["ts"] as? String ?? "") > "2026-01-01T00:00:30"
        }
        #expect(Set(late.compactMap { $0["peer"] as? String }).count == 3)
    }

    @Test func oneToOneSessionsByDefaultLeaveTheOthersWaiting() async throws {
        let (commands, events, hub, _, _, _) = try await run(controleesPerSession: 1)
        #expect(!commands.contains { if case .updateControllerMulticastList = $0 { true } else { false } })
        // Four peers at 1.5 m all hold priority for the board's one session: the first keeps it.
        let ranged = Set(
            events.filter { $0["type"] as? String == "range" && $0["node"] as? String == hub && $0["distance"] is Double }
                .compactMap { $0["peer"] as? String })
        #expect(ranged.count == 1)
        let configs = commands.compactMap { if case .setAppConfig(_, let tlvs) = $0 { tlvs } else { nil } }
        #expect(configs.allSatisfy { $0.contains(.multiNodeMode(.unicast)) })
    }
}
