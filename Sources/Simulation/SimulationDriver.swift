import BLE
import Bridge
import Events
import Foundation
import GATTServer
import Logging
import PeerProtocol
import PeerSecurity
import StreamIO
import UCIHost

/// Time as the world sees it, on the Unix epoch for event timestamps.
private struct VirtualTime: TimeSource {
    let world: World
    let epochMilliseconds: Int64
    func nowMilliseconds() -> Int64 { epochMilliseconds + world.nowMilliseconds }
}

/// Runs a scenario: one `BridgeNode` per in-process body, each with a virtual UWBS and a virtual
/// BLE adapter, all through the same bridge code that drives real radios.
///
/// Time advances in fixed steps. At each step the world produces radio traffic, then each node in
/// scenario order receives its share and is waited on until idle. Nothing depends on thread
/// timing, so a scenario and seed always give the same event stream.
package final class SimulationDriver: Sendable {
    package struct Options: Sendable {
        package var seed: UInt64 = 1
        /// Seconds of scenario time per second of wall time; nil runs as fast as possible.
        package var speed: Double? = 1
        /// Overrides the scenario's duration (seconds).
        package var duration: Double?
        package var stepMilliseconds: Int64 = 50
        /// Event timestamps start here (Unix epoch milliseconds).
        package var epochMilliseconds: Int64 = 0
        package var bridge = BridgeConfig()
        /// Wraps each in-process node's radios (by node name), e.g. to capture their traffic.
        package var instrument: (@Sendable (String, any UCITransport, any BLEAdapter, any TimeSource) -> (any UCITransport, any BLEAdapter))?
        /// Wraps each in-process rig's GATT backend (by node name, with the services it offers),
        /// e.g. to capture phones' traffic.
        package var instrumentGATT: (@Sendable (String, any GATTBackend, [PhoneTransport], any TimeSource) -> any GATTBackend)?
        /// The clock the nodes' UCI hosts time the boards' answers by.
        package var uwbClock: any Clock<Duration> = ContinuousClock()
        package init() {}
    }

    package let world: World
    private let options: Options
    private let nodes: [(body: Int, node: BridgeNode, tracker: WorkTracker, seed: UInt64)]
    /// The scenario's attacker nodes by body; they act after their share of each step.
    let attackers: [Int: Attacker]
    /// The scenario's emulated phones by body; they act in their turn of each step.
    package let phones: [Int: EmulatedIPhone]
    package let androidPhones: [Int: EmulatedAndroidPhone]
    /// Phones' GATT connections to the rigs that serve them, and those rigs' backends by body.
    let gattAir: GATTAir
    private let gattServers: [Int: VirtualGATTServer]

    package init(scenario: Scenario, options: Options, events: EventStream, logger: Logger) {
        let world = World(scenario: scenario, seed: options.seed)
        var random = SplitMix64(seed: options.seed)
        let time = VirtualTime(world: world, epochMilliseconds: options.epochMilliseconds)
        var nodes: [(Int, BridgeNode, WorkTracker, UInt64)] = []
        var attackers: [Int: Attacker] = [:]
        var phones: [Int: EmulatedIPhone] = [:]
        var androidPhones: [Int: EmulatedAndroidPhone] = [:]
        var gattServers: [Int: VirtualGATTServer] = [:]
        let gattAir = GATTAir(world: world)
        for (body, spec) in scenario.nodes.enumerated() {
            // Every body draws its identity, even external ones, so adding an external body to a
            // scenario does not reshuffle the others.
            let identity = Self.identity(for: spec, group: scenario.group ?? 1, random: &random)
            let seed = random.next()
            guard spec.external != true else { continue }
            if let attack = spec.attack {
                let target = attack.target.flatMap { name in scenario.nodes.first { $0.name == name } } ?? spec
                let key = Self.security(for: target, in: scenario, worldSeed: options.seed, seed: seed, base: PeerSecuritySettings()).groupKey
                attackers[body] = Attacker(world: world, body: body, attack: attack, eventKey: key, seed: seed)
                continue
            }
            if spec.kind == .android {
                androidPhones[body] = EmulatedAndroidPhone(world: world, air: gattAir, body: body, seed: seed)
                continue
            }
            if spec.isPhone {
                phones[body] = EmulatedIPhone(world: world, air: gattAir, body: body, seed: seed)
                continue
            }
            let tracker = WorkTracker()
            var radios: (any UCITransport, any BLEAdapter) = (
                SimulatedTransport(world: world, body: body, tracker: tracker), VirtualAdapter(world: world, body: body)
            )
            if let instrument = options.instrument { radios = instrument(spec.name, radios.0, radios.1, time) }
            var config = options.bridge
            config.security = Self.security(for: spec, in: scenario, worldSeed: options.seed, seed: seed, base: config.security)
            // A keyed rig runs with LE privacy and its derived IRK (`RigRadios`), so its virtual one does.
            if let key = config.security.groupKey {
                world.givePrivacy(body: body, irk: KeySchedule.identityResolvingKey(key, peer: identity.peerID), seed: seed)
            }
            let services = spec.phoneServices ?? []
            let server = services.isEmpty ? nil : gattAir.serve(rig: body, database: PhoneTransport.database(offering: services))
            gattServers[body] = server
            let gatt = server.map { options.instrumentGATT?(spec.name, $0, services, time) ?? $0 }
            let node = BridgeNode(
                identity: identity, config: config, uwbTransport: radios.0, ble: radios.1, events: events,
                time: time, logger: logger, seed: seed, tracker: tracker, uwbClock: options.uwbClock, gatt: gatt)
            nodes.append((body, node, tracker, seed))
        }
        self.world = world
        self.options = options
        self.nodes = nodes
        self.attackers = attackers
        self.phones = phones
        self.androidPhones = androidPhones
        self.gattAir = gattAir
        self.gattServers = gattServers
    }

    /// The in-process nodes in scenario order: name, identity, the seed of their choices, and
    /// the services they offer phones.
    package var nodeSetups: [(name: String, node: BridgeNode, seed: UInt64, phoneServices: [PhoneTransport])] {
        nodes.map { (world.scenario.nodes[$0.body].name, $0.node, $0.seed, world.scenario.nodes[$0.body].phoneServices ?? []) }
    }

    package var stepMilliseconds: Int64 { options.stepMilliseconds }
    package var durationMilliseconds: Int64 { Int64(((options.duration ?? world.scenario.duration) * 1000).rounded()) }

    /// The work tracker of an in-process node, for a test that holds back what a radio answers:
    /// work waiting on the world is not the node's, or the driver would wait for it forever.
    func tracker(ofNode name: String) -> WorkTracker? {
        nodes.first { world.scenario.nodes[$0.body].name == name }?.tracker
    }

    /// Identities of the in-process nodes, by scenario name.
    package var identities: [String: NodeIdentity] {
        Dictionary(uniqueKeysWithValues: nodes.map { (world.scenario.nodes[$0.body].name, $0.node.identity) })
    }

    static func identity(for spec: Scenario.Node, group: UInt16, random: inout SplitMix64) -> NodeIdentity {
        let peerID = PeerID(random.next())
        let address = UInt16.random(in: 1...0xFFFE, using: &random)
        let card = spec.card.flatMap { try? ProfileCard(json: $0.text) } ?? ProfileCard(name: spec.name)
        return NodeIdentity(peerID: peerID, name: spec.name, group: group, card: card, uwbShortAddress: address)
    }

    /// A node's event key (its own, else the scenario's; validated with the scenario; "from-seed"
    /// is drawn from the world's seed) and a key seed from its seed, so that a world runs the same
    /// way twice.
    static func security(
        for spec: Scenario.Node, in scenario: Scenario, worldSeed: UInt64, seed: UInt64, base: PeerSecuritySettings
    ) -> PeerSecuritySettings {
        var security = base
        switch spec.groupKey ?? scenario.groupKey {
        case nil: break
        case Scenario.noKey: security.groupKey = nil
        case Scenario.keyFromSeed:
            var random = SplitMix64(seed: worldSeed ^ 0x6B65_7966_726F_6D73)
            security.groupKey = try? GroupKey(bytes: (0..<4).flatMap { _ in withUnsafeBytes(of: random.next().littleEndian, Array.init) })
        case let text?: security.groupKey = try? GroupKey(text: text)
        }
        if let allow = spec.allowInsecurePeers { security.allowInsecurePeers = allow }
        var random = SplitMix64(seed: seed ^ 0x5EC0_12E7)
        security.keySeed = (0..<4).flatMap { _ in withUnsafeBytes(of: random.next().littleEndian, Array.init) }
        return security
    }

    /// Runs the scenario to its end (or `until` returns true), then stops every node.
    package func run(until shouldStop: @Sendable () -> Bool = { false }) async throws {
        for entry in nodes { try await entry.node.start() }
        let loops = nodes.map { entry in Task { await entry.node.run() } }
        for entry in nodes { await entry.tracker.waitUntilIdle() }

        let end = Int64(((options.duration ?? world.scenario.duration) * 1000).rounded())
        let started = ContinuousClock.now
        var t: Int64 = 0
        while t < end, !shouldStop() {
            t += options.stepMilliseconds
            if let speed = options.speed, speed > 0 {
                try await Task.sleep(until: started + .milliseconds(Double(t) / speed), clock: .continuous)
            }
            await step(to: t)
        }
        for entry in nodes { await entry.node.stop() }
        for loop in loops { await loop.value }
    }

    /// Advances the world by one step and lets every node catch up, in scenario order. External
    /// bodies (served over TCP) receive their traffic in the same pass, and attackers act on theirs.
    ///
    /// Each node gets its UWB bytes, then its BLE events, then a tick, waiting for it to go idle
    /// after each: UWB bytes pass through the host's reader task while BLE events are posted
    /// directly, so delivering them together would let their order vary from run to run.
    func step(to t: Int64) async {
        world.advance(to: t)
        gattAir.advance()
        var next = nodes.startIndex
        for body in world.scenario.nodes.indices {
            guard next < nodes.endIndex, nodes[next].body == body else {
                world.flushDevice(body: body)
                world.flushAir(body: body)
                attackers[body]?.act(now: t)
                phones[body]?.act(now: t)
                androidPhones[body]?.act(now: t)
                continue
            }
            let (node, tracker) = (nodes[next].node, nodes[next].tracker)
            next += 1
            world.flushDevice(body: body)
            await tracker.waitUntilIdle()
            world.flushAir(body: body)
            await tracker.waitUntilIdle()
            if gattServers[body]?.flush() == true { await tracker.waitUntilIdle() }
            node.tick()
            await tracker.waitUntilIdle()
        }
    }
}
