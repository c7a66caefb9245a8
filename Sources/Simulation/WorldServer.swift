import BLE
import Bridge
import Logging
import Synchronization
import StreamIO
import SystemPackage
import UCIHost

/// Serves a running world's external bodies over TCP: each external body's virtual UWBS on its
/// own port (one connection = one device, like pica; a new connection is a replug), and the
/// virtual air on one shared port where a client names its body in `hello`.
package final class WorldServer: Sendable {
    package struct Endpoint: Sendable {
        package var body: String
        package var uwbPort: UInt16
    }

    private let world: World
    private let logger: Logger
    private let listeners: [TCPListener]
    package let endpoints: [Endpoint]
    package let airPort: UInt16
    private let airListener: TCPListener
    /// The current UCI connection of each external body (a new connection replaces the old).
    private let deviceConnections = DeviceConnections()

    package init(world: World, host: String, uwbBasePort: UInt16, airPort: UInt16, logger: Logger) throws {
        self.world = world
        self.logger = logger
        var listeners: [TCPListener] = []
        var endpoints: [Endpoint] = []
        for (body, node) in world.scenario.nodes.enumerated() where node.external == true {
            let port = uwbBasePort == 0 ? 0 : uwbBasePort + UInt16(endpoints.count)
            let listener = try TCPListener(host: host, port: port)
            listeners.append(listener)
            endpoints.append(Endpoint(body: node.name, uwbPort: listener.port))
            let failed: @Sendable (Errno) -> Void = { [logger] in
                logger.warning("accepting a board connection failed; accepting goes on", metadata: ["error": "\($0)"])
            }
            listener.acceptLoop(failed: failed) { [world, logger, deviceConnections] connection in
                Self.serveDevice(connection, body: body, world: world, logger: logger, connections: deviceConnections)
            }
        }
        self.listeners = listeners
        self.endpoints = endpoints
        airListener = try TCPListener(host: host, port: airPort)
        self.airPort = airListener.port
        let failed: @Sendable (Errno) -> Void = { [logger] in
            logger.warning("accepting an air connection failed; accepting goes on", metadata: ["error": "\($0)"])
        }
        airListener.acceptLoop(failed: failed) { [world, logger] connection in
            Self.serveAir(connection, world: world, logger: logger)
        }
    }

    package func close() {
        listeners.forEach { $0.close() }
        airListener.close()
    }

    /// Pulls the external body's board out: its host sees the connection end, as after an
    /// unplug. Connecting again plugs in a fresh board.
    package func unplug(body name: String) {
        guard let body = world.bodyIndex(named: name) else { return }
        deviceConnections.take(body)?.close()
    }

    private static func serveDevice(
        _ connection: StreamConnection, body: Int, world: World, logger: Logger, connections: DeviceConnections
    ) {
        logger.info("UWB host connected", metadata: ["body": "\(world.scenario.nodes[body].name)"])
        connections.replace(body, with: connection)?.close()
        world.attachDevice(body: body) { bytes in try? connection.writeBlocking(bytes) }
        Task {
            while let bytes = try? await connection.read() { world.deviceInput(body: body, bytes: bytes) }
            logger.info("UWB host disconnected", metadata: ["body": "\(world.scenario.nodes[body].name)"])
            if connections.remove(body, ifStill: connection) { world.detachDevice(body: body) }
            connection.close()
        }
    }

    private static func serveAir(_ connection: StreamConnection, world: World, logger: Logger) {
        Task {
            var buffer: [UInt8] = []
            var body: Int?
            do {
                while let chunk = try await connection.read() {
                    buffer += chunk
                    while let frame = try AirFrame.next(from: &buffer) {
                        if let body {
                            try handle(frame, body: body, world: world, connection: connection)
                        } else if case .hello(let name) = frame, let index = world.bodyIndex(named: name),
                            world.scenario.nodes[index].external == true
                        {
                            body = index
                            world.attachEndpoint(body: index) { event in try? connection.writeBlocking(AirFrame.event(event).encoded()) }
                            try connection.writeBlocking(AirFrame.welcome(World.address(ofBody: index)).encoded())
                            logger.info("air client joined", metadata: ["body": "\(name)"])
                        } else {
                            let external = world.scenario.nodes.filter { $0.external == true }.map(\.name)
                            try connection.writeBlocking(
                                AirFrame.failure("say hello with an external body name first: \(external.joined(separator: ", "))").encoded())
                            connection.close()
                            return
                        }
                    }
                }
            } catch {
                logger.warning("air client dropped", metadata: ["error": "\(error)"])
            }
            if let body { world.detachEndpoint(body: body) }
            connection.close()
        }
    }

    private static func handle(_ frame: AirFrame, body: Int, world: World, connection: StreamConnection) throws {
        switch frame {
        case .advertise(let data): world.advertise(body: body, data: data)
        case .scan: world.startScanning(body: body)
        case .connect(let address): try connection.writeBlocking(AirFrame.connected(world.connect(from: body, to: address)).encoded())
        case .send(let link, let sdu): try? world.send(sdu, on: link, from: body)
        case .disconnect(let link): world.disconnect(link, from: body)
        case .privacy(let irk):
            // Its addresses' prands follow from the key, so a seeded world still runs the same way.
            world.givePrivacy(body: body, irk: irk, seed: irk.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        case .hello, .welcome, .connected, .event, .failure: break
        }
    }
}

/// Which connection currently carries each body's board.
private final class DeviceConnections: Sendable {
    private let byBody = Mutex<[Int: StreamConnection]>([:])

    func replace(_ body: Int, with connection: StreamConnection) -> StreamConnection? {
        byBody.withLock { $0.updateValue(connection, forKey: body) }
    }

    func take(_ body: Int) -> StreamConnection? {
        byBody.withLock { $0.removeValue(forKey: body) }
    }

    /// Forgets `connection` if it is still the body's current one; true if it was.
    func remove(_ body: Int, ifStill connection: StreamConnection) -> Bool {
        byBody.withLock { table in
            guard table[body] === connection else { return table[body] == nil }
            table[body] = nil
            return true
        }
    }
}
