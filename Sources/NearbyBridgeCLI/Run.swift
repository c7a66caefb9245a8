import ArgumentParser
import BLE
import Bridge
import Foundation
import PeerProtocol
import Simulation
import UCIHost

/// Where the UWB board is.
enum UWBEndpoint: ExpressibleByArgument, Equatable {
    case tcp(host: String, port: UInt16)
    case usb(selector: String?)
    case tty(path: String)

    init?(argument: String) {
        if argument.hasPrefix("tcp:") {
            let rest = argument.dropFirst(4)
            guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]),
                colon != rest.startIndex
            else { return nil }
            self = .tcp(host: String(rest[..<colon]), port: port)
        } else if argument == "usb" {
            self = .usb(selector: nil)
        } else if argument.hasPrefix("usb:"), argument.count > 4 {
            self = .usb(selector: String(argument.dropFirst(4)))
        } else if argument.hasPrefix("/dev/") {
            self = .tty(path: argument)
        } else {
            return nil
        }
    }

    static var defaultValueDescription: String { "tcp:HOST:PORT | usb | usb:BUS-PORT | usb:SERIAL | /dev/ttyACMn" }
}

/// Which Bluetooth backend.
enum BLEBackend: ExpressibleByArgument, Equatable {
    case world(host: String, port: UInt16, body: String)
    case bluez(adapter: String)

    init?(argument: String) {
        if argument.hasPrefix("world:") {
            let rest = argument.dropFirst(6)
            guard let slash = rest.firstIndex(of: "/"), let colon = rest[..<slash].lastIndex(of: ":"),
                let port = UInt16(rest[rest.index(after: colon)..<slash]), rest.index(after: slash) < rest.endIndex
            else { return nil }
            self = .world(host: String(rest[..<colon]), port: port, body: String(rest[rest.index(after: slash)...]))
        } else if argument.hasPrefix("hci"), UInt16(argument.dropFirst(3)) != nil {
            self = .bluez(adapter: argument)
        } else {
            return nil
        }
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the bridge on radios: a UWB board and a Bluetooth adapter.",
        discussion: """
            Available today: --uwb tcp:HOST:PORT (a `nearby-bridge world` server or Google's pica) \
            with --ble world:HOST:PORT/NODE (the world's virtual air). The libusb and tty UWB \
            transports and the BlueZ backend are not built yet; asking for them reports what this \
            machine offers and exits with an error instead of pretending.
            """)

    @OptionGroup var common: CommonOptions

    @OptionGroup var proximity: ProximityOptions

    @Option(help: "UWB board: tcp:HOST:PORT, usb, usb:BUS-PORT, usb:SERIAL or /dev/ttyACMn.")
    var uwb: UWBEndpoint

    @Option(help: "Bluetooth backend: world:HOST:PORT/NODE or hciN.")
    var ble: BLEBackend

    @Option(help: "Only peers in the same group interact (0-65535).")
    var group: UInt16 = 1

    @Option(help: "Name shown to peers (default: the host name).")
    var name: String?

    @Option(help: "Profile card handed to peers after a bump: a JSON object file (at most 400 bytes compacted).")
    var profile: String?

    func run() async throws {
        let (events, logger) = common.bootstrap()
        let transport: any UCITransport
        switch uwb {
        case .tcp(let host, let port):
            transport = try TCPConnection.connect(host: host, port: port)
        case .usb, .tty:
            let seen: String =
                switch USBProbe.probe() {
                case .unavailable(let why): why
                case .devices(let count, let version): "libusb \(version) sees \(count) USB device(s)"
                }
            throw ValidationError(
                "the USB/tty UWB transport is not implemented in this build yet (\(seen)); use --uwb tcp:HOST:PORT with `nearby-bridge world` or pica")
        }
        let adapter: any BLEAdapter
        switch ble {
        case .world(let host, let port, let body):
            adapter = try RemoteAirAdapter(host: host, port: port, body: body)
        case .bluez(let name):
            let finding = BlueZProbe.explain(BlueZProbe.probe(adapter: name))
            throw ValidationError("the BlueZ backend is not implemented in this build yet: \(finding); use --ble world:HOST:PORT/NODE")
        }

        let displayName = name ?? ProcessInfo.processInfo.hostName
        let card = try profile.map { path in
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("cannot read --profile \(path)")
            }
            do { return try ProfileCard(json: text) } catch { throw ValidationError("--profile \(path): \(error)") }
        } ?? ProfileCard(name: displayName)

        var random = SystemRandomNumberGenerator()
        let identity = NodeIdentity(
            peerID: PeerID(random.next()), name: displayName, group: group, card: card,
            uwbShortAddress: UInt16.random(in: 1...0xFFFE, using: &random))
        logger.notice("peer id \(identity.peerID), UWB address \(identity.uwbShortAddress)")
        var config = BridgeConfig()
        config.proximity = proximity.config
        let node = BridgeNode(
            identity: identity, config: config, uwbTransport: transport, ble: adapter, events: events,
            time: WallClock(), logger: logger, seed: random.next())
        try await node.start()

        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(200))
                node.tick()
            }
        }
        let stop = StopSignal { Task { await node.stop() } }
        defer { withExtendedLifetime(stop) {} }
        await node.run()
        ticker.cancel()
    }
}
