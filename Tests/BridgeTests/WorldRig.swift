import Bridge
import Events
import PeerProtocol
import StreamIO
import Synchronization
import UCI
import UCIHost

@testable import Simulation

/// A bridge ranging against the built-in `world` scenario served over loopback TCP, in wall-clock
/// time, whose board can be unplugged and whose reconnections the test shapes: `run --uwb tcp:…
/// --ble world:…` in miniature, for recovery tests.
final class WorldRig: Sendable {
    let node: BridgeNode
    let output = CollectedEvents()
    let server: WorldServer
    private let world: Task<Void, any Error>
    private let loop: Task<Void, Never>

    /// - Parameter reconnect: makes the transport for the `attempt`th reconnection (from 1) out
    ///   of a fresh connection to the board.
    init(
        peerID: UInt64, controleesPerSession: Int = 1, time: any TimeSource = SystemClock(),
        reconnect: @escaping @Sendable (_ attempt: Int, StreamConnection) -> any UCITransport = { $1 }
    ) async throws {
        var options = SimulationDriver.Options()
        options.speed = 5
        options.duration = 60
        let driver = SimulationDriver(
            scenario: try Scenario.builtIn("world"), options: options,
            events: EventStream(output: CollectedEvents(), includesRanges: false), logger: quietLogger)
        let server = try WorldServer(world: driver.world, host: "127.0.0.1", uwbBasePort: 0, airPort: 0, logger: quietLogger)
        self.server = server
        world = Task { try await driver.run() }
        let port = server.endpoints[0].uwbPort
        var config = BridgeConfig()
        config.controleesPerSession = controleesPerSession
        let attempts = Counter()
        node = BridgeNode(
            identity: NodeIdentity(
                peerID: PeerID(peerID), name: "field-rig", group: 1, card: ProfileCard(name: "Field"), uwbShortAddress: 0x4243),
            config: config, uwbTransport: try StreamConnection.connect(host: "127.0.0.1", port: port),
            ble: try RemoteAirAdapter(host: "127.0.0.1", port: server.airPort, body: "field-rig"),
            events: EventStream(output: output, includesRanges: true), time: time, logger: quietLogger,
            seed: 9, reconnectUWB: { reconnect(attempts.next(), try StreamConnection.connect(host: "127.0.0.1", port: port)) })
        try await node.start()
        loop = Task { [node] in await node.run() }
    }

    /// The index of the first line after `index` that contains `fragment`, ticking the node
    /// while it waits.
    func waitFor(_ fragment: String, after index: Int) async throws -> Int {
        while true {
            let lines = output.lines
            if let found = lines.indices.dropFirst(index).first(where: { lines[$0].contains(fragment) }) { return found }
            node.tick()
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func unplug() { server.unplug(body: "field-rig") }

    /// Stops the node gracefully and the world with it; returns every event, parsed.
    func stop() async throws -> [[String: Any]] {
        await node.stop()
        await loop.value
        world.cancel()
        server.close()
        return try parse(output.lines)
    }
}

/// Counts from 1, across tasks.
private final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
