import ArgumentParser
import BLE
import BLEBlueZ
import Capture
import Bridge
import Foundation
import PeerProtocol
import PeerSecurity
import Logging
import MQTTOutput
import Replay
import ServiceLifecycle
import Simulation
import StreamIO
import UCIHost
import UCIUSB

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
        } else if argument.hasPrefix("/") {
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
            UWB boards: --uwb usb finds the one known board on USB (usb:BUS-PORT or usb:SERIAL \
            picks one; `nearby-bridge devices` lists them), drives it through libusb and recovers \
            when it is unplugged and plugged back in; --uwb /dev/ttyACM0 uses the kernel's serial \
            driver instead; --uwb tcp:HOST:PORT reaches a `nearby-bridge world` server or Google's \
            pica. Bluetooth: --ble hci0 uses a kernel adapter beside bluetoothd (the management channel \
            for advertising and discovery, L2CAP LE channels for the peer protocol; needs \
            CAP_NET_ADMIN), --ble world:HOST:PORT/NODE joins a world's virtual air.

            SIGINT, SIGTERM or a failed stdout stop the bridge the same way: peers get a goodbye, \
            sessions are deinitialised, advertising is removed and the board is handed back.

            \(ExitStatus.help)
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Settings file (JSON: uwb, ble, group, name, profile, ranges, logLevel); options given here win.")
    var config: String?

    @OptionGroup var proximity: ProximityOptions

    @Option(help: "UWB board: tcp:HOST:PORT, usb, usb:BUS-PORT, usb:SERIAL or /dev/ttyACMn.")
    var uwb: UWBEndpoint?

    @Option(help: "Bluetooth backend: world:HOST:PORT/NODE or hciN.")
    var ble: BLEBackend?

    @Option(parsing: .unconditional, help: "Only peers in the same group interact (0-65535, default 1).")
    var group: UInt16?

    @Option(help: "Name shown to peers (default: the host name).")
    var name: String?

    @Option(help: "Profile card handed to peers after a bump: a JSON object file (at most 400 bytes compacted).")
    var profile: String?

    @Option(help: "Also publish every event to an MQTT broker: mqtt://[USER:PASSWORD@]HOST[:PORT] or mqtts://…; client id, credentials, CA file, topic prefix and spool go in the config's \"mqtt\" object (README \"MQTT\").")
    var mqtt: String?

    func run() async throws {
        let settings = try config.map(RunConfig.load) ?? RunConfig()
        guard let uwb = try uwb ?? settings.uwb.map({ try RunConfig.parse(UWBEndpoint.self, $0, key: "uwb") }) else {
            throw ValidationError("say which UWB board to use: --uwb usb (or \"uwb\" in --config FILE)")
        }
        guard let ble = try ble ?? settings.ble.map({ try RunConfig.parse(BLEBackend.self, $0, key: "ble") }) else {
            throw ValidationError("say which Bluetooth adapter to use: --ble hci0 (or \"ble\" in --config FILE)")
        }
        let capture = try common.openCapture()
        let group = self.group ?? settings.group.map(UInt16.init) ?? 1
        // Drawn before the outputs open: the MQTT topics and client id name the node.
        var random = SystemRandomNumberGenerator()
        let peerID = PeerID(random.next())
        let mqttSettings = mqtt.map { url in
            var given = settings.mqtt ?? MQTTSettings(url: url)
            given.url = url
            return given
        } ?? settings.mqtt
        let context = try common.bootstrap(config: settings, capture: capture, thresholds: proximity.config) { logger in
            guard let mqttSettings else { return [] }
            do {
                return [try MQTTSink(settings: mqttSettings, group: group, node: peerID.description, defaultSpool: try Self.spoolDirectory(), logger: logger)]
            } catch {
                throw ValidationError("--mqtt: \(error)")
            }
        }
        try await context.run {
            try await bridge(uwb: uwb, ble: ble, settings: settings, group: group, peerID: peerID, capture: capture, context: context)
        }
    }

    /// Where the MQTT spool lives unless the config says: systemd's StateDirectory
    /// (`$STATE_DIRECTORY`, /var/lib/nearby-bridge for the packaged unit), else
    /// `$XDG_STATE_HOME/nearby-bridge` (~/.local/state/nearby-bridge).
    static func spoolDirectory() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
            ?? (environment["XDG_STATE_HOME"] ?? NSHomeDirectory() + "/.local/state") + "/nearby-bridge"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return base + "/mqtt-spool"
    }

    /// Opens the radios and builds the node; the service it returns runs it until the stop.
    private func bridge(
        uwb: UWBEndpoint, ble: BLEBackend, settings: RunConfig, group: UInt16, peerID: PeerID, capture: CaptureDirectory?,
        context: CommandContext
    ) async throws -> any Service {
        let (events, logger) = (context.events, context.logger)
        let name = self.name ?? settings.name
        let profile = self.profile ?? settings.profile
        // Files first: a bad profile is reported before any radio is opened.
        let displayName = name ?? ProcessInfo.processInfo.hostName
        let card = try profile.map { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("cannot read --profile \(path): \(whyUnreadable(path))")
            }
            guard let text = String(validating: data, as: UTF8.self) else {
                throw ValidationError("--profile \(path) is not UTF-8 text (it must hold a JSON object)")
            }
            do { return try ProfileCard(json: text) } catch { throw ValidationError("--profile \(path): \(error)") }
        } ?? ProfileCard(name: displayName)
        // The node's thread: it reads a tcp or tty board itself, so a notification goes from
        // `read` to its event line without a thread hand-off (docs/PERFORMANCE.md).
        let loop = EventLoop(name: "node")
        let (transport, reconnect, adapter) = try RigRadios.open(
            uwb: uwb, ble: ble, privateAddresses: settings.groupKey != nil || settings.groupKeyFile != nil, loop: loop, logger: logger)
        var radios: (any UCITransport, any BLEAdapter) = (transport, adapter)
        var reopen = reconnect
        if let capture {
            let recorder = try capture.recorder(node: displayName)
            let clock: @Sendable () -> Int64 = { SystemClock().wallMilliseconds() * 1000 }
            radios = (recorder.wrap(uwb: transport, clock: clock), recorder.wrap(ble: adapter, clock: clock))
            reopen = { recorder.wrap(uwb: try await reconnect(), clock: clock) }
        }

        var random = SystemRandomNumberGenerator()
        let identity = NodeIdentity(
            peerID: peerID, name: displayName, group: group, card: card,
            uwbShortAddress: UInt16.random(in: 1...0xFFFE, using: &random))
        logger.notice("peer id \(identity.peerID), UWB address \(identity.uwbShortAddress)")
        let seed = random.next()
        var config = BridgeConfig()
        config.proximity = proximity.config
        config.rangingSessions = settings.rangingSessions
        if let maxPeers = settings.maxPeers { config.maxPeers = maxPeers }
        if let controlees = settings.controleesPerSession { config.controleesPerSession = max(1, controlees) }
        if let dialect = settings.uwbDialect { config.uwbDialect = dialect }
        config.uwb.countryCode = settings.countryCode
        try settings.applyRangeCorrection(to: &config)
        try settings.applySecurity(to: &config, logger: logger)
        if case .bluez = ble { config.bluetoothRequired = true }
        let node = BridgeNode(
            identity: identity, config: config, uwbTransport: radios.0, ble: radios.1, events: events,
            time: SystemClock(), logger: logger, seed: seed, reconnectUWB: reopen, loop: loop)
        if let capture {
            try CaptureManifest(
                stepMilliseconds: nil, durationMilliseconds: nil, proximity: .init(proximity.config),
                nodes: [.init(displayName, node, seed: seed)]
            ).write(to: capture.path)
            try CaptureSecrets([(displayName, node.security)]).write(to: capture.path)
        }
        return NodeService(node: node, stop: context.stop)
    }
}

/// The radios of a rig as the command line names them.
enum RigRadios {
    /// Opens the UWB board (and says how to reopen it after a replug) and the Bluetooth adapter;
    /// a rig of a keyed event asks the adapter for resolvable private addresses.
    static func open(uwb: UWBEndpoint, ble: BLEBackend, privateAddresses: Bool = false, loop: EventLoop, logger: Logger) throws -> (
        any UCITransport, @Sendable () async throws -> any UCITransport, any BLEAdapter
    ) {
        let transport: any UCITransport
        let reconnect: @Sendable () async throws -> any UCITransport
        switch uwb {
        case .tcp(let host, let port):
            transport = try StreamConnection.connect(host: host, port: port, loop: loop)
            reconnect = { try StreamConnection.connect(host: host, port: port, loop: loop) }
        case .usb(let selector):
            let board = try USBBoards.select(selector, from: USBBoards.list())
            logger.notice("UWB board \(USBBoards.summary(board))")
            transport = try USBTransport.open(board)
            // After a replug the board may sit on another port: find it again by serial.
            let again = board.serial ?? board.location
            reconnect = { try await USBBoards.open(again) }
        case .tty(let path):
            transport = try StreamConnection.openTTY(path, loop: loop)
            reconnect = { try StreamConnection.openTTY(path, loop: loop) }
        }
        let adapter: any BLEAdapter
        switch ble {
        case .world(let host, let port, let body):
            adapter = try RemoteAirAdapter(host: host, port: port, body: body)
        case .bluez(let name):
            adapter = try BlueZAdapter(name: name, psm: BridgeConfig().psm, privateAddresses: privateAddresses, logger: logger)
        }
        return (transport, reconnect, adapter)
    }
}

/// A rig's node as a service: starts it (a radio that does not answer throws), runs it with a
/// clock tick every 200 ms, and on the group's graceful shutdown (SIGINT, SIGTERM, a failed
/// stdout) stops it: goodbye to every peer, their sessions deinitialised, advertising removed,
/// the board closed; `run` returns once that is done.
struct NodeService: Service {
    let node: BridgeNode
    let stop: StopRequest

    func run() async throws {
        try await node.start()
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { [node] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(200))
                    node.tick()
                }
            }
            tasks.addTask { [node, stop] in
                // A signal that came before the group could see it was still requested.
                if !stop.isRequested {
                    do { try await gracefulShutdown() } catch { return }  // cancelled: the node ended
                }
                stop.request()
                await node.stop()
            }
            await node.run()
            tasks.cancelAll()
        }
    }
}

/// `run --config FILE`: the settings a rig's service starts with (packaging/config.json).
struct RunConfig: Decodable {
    var uwb: String?
    var ble: String?
    /// 0-65535; read as any whole number so that one out of range gets its own message.
    var group: Int?
    var name: String?
    var profile: String?
    var ranges: Bool?
    var logLevel: String?
    /// Ranging sessions to run at once; without it, what the board reports (GET_CAPS_INFO).
    var rangingSessions: Int?
    /// Peers tracked at most (the least recently heard is evicted).
    var maxPeers: Int?
    /// Peers we control sharing one one-to-many UWB session; 1 (the default) or absent: one-to-one only.
    var controleesPerSession: Int?
    /// How the board's firmware is driven: "qorvo" (the default: Qorvo's FiRa UCI firmware, the
    /// DWM3001CDK) or "fira" (plain FiRa UCI with AOSP's defaults, e.g. Google's pica).
    var uwbDialect: UWBDialectName?
    /// The regulatory region the board must keep, two capital letters (ISO 3166-1 alpha-2), sent
    /// to the board at bring-up (Android's ANDROID_SET_COUNTRY_CODE); absent: none is sent.
    var countryCode: String?
    /// The received-level bias correction: "aps011-prf64" (the default: APS011's table, for
    /// DW1000/DW3000 boards whose firmware does not correct it) or "none".
    var rangeBias: String?
    /// Per board (`device` event's `board`), what `nearby-bridge calibrate` measured: its
    /// `offset` in metres (read too long), and when and against what.
    var calibration: [String: BoardCalibrationEntry]?

    /// What `nearby-bridge calibrate` files (`CalibrateCommand.file`): only the offset is used.
    struct BoardCalibrationEntry: Decodable {
        var offset: Double
        var date: String?
        var reference: String?
        var distances: [Double]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case offset, date, reference, distances
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case uwb, ble, group, name, profile, ranges, logLevel, rangingSessions, maxPeers, controleesPerSession, uwbDialect
        case countryCode, rangeBias, calibration, groupKey, mqtt, groupKeyFile, allowInsecurePeers, advertRotationSeconds
    }

    /// The keys a settings file may have; any other is refused, with the key meant if it is close.
    static var knownKeys: KnownKeys {
        KnownKeys.object(
            CodingKeys.self,
            [
                CodingKeys.calibration.stringValue: .map(.object(BoardCalibrationEntry.CodingKeys.self)),
                CodingKeys.mqtt.stringValue: .object(MQTTSettings.CodingKeys.self),
            ])
    }

    /// The event key (docs/PROTOCOL.md, "Security"): 64 hex digits here, or a file holding them
    /// (`nearby-bridge keygen --output FILE`); one or the other.
    var groupKey: String?
    /// The MQTT output (`--mqtt` gives the URL and wins over `mqtt.url`).
    var mqtt: MQTTSettings?
    var groupKeyFile: String?
    /// With an event key: still range with v1 (unencrypted) peers it hears. Off by default.
    var allowInsecurePeers: Bool?
    /// How often the private advert changes (seconds; default 900).
    var advertRotationSeconds: Int?

    /// The event key and its options into the bridge's settings, and one line on stderr saying
    /// which security the peer channel has.
    func applySecurity(to config: inout BridgeConfig, logger: Logger) throws {
        let text: String?
        switch (groupKey, groupKeyFile) {
        case (let key?, nil): text = key
        case (nil, let path?):
            guard let data = FileManager.default.contents(atPath: path), let contents = String(data: data, encoding: .utf8) else {
                throw ValidationError("cannot read \"groupKeyFile\" \(path): \(whyUnreadable(path))")
            }
            if let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int, mode & 0o077 != 0 {
                logger.warning("the event key file can be read by other users; chmod 600 it", metadata: ["file": "\(path)"])
            }
            text = contents
        case (nil, nil): text = nil
        case (.some, .some): throw ValidationError("give \"groupKey\" or \"groupKeyFile\", not both")
        }
        if let text {
            do { config.security.groupKey = try GroupKey(text: text) } catch { throw ValidationError("\"groupKey\": \(error)") }
        }
        config.security.allowInsecurePeers = allowInsecurePeers ?? false
        if let seconds = advertRotationSeconds {
            guard seconds >= 60 else { throw ValidationError("\"advertRotationSeconds\" must be at least 60, not \(seconds)") }
            config.security.advertRotationMilliseconds = Int64(seconds) * 1000
        }
        if let key = config.security.groupKey {
            logger.notice("peer channel: encrypted with the event key", metadata: ["key": "\(key.fingerprint)", "v1 peers": "\(config.security.allowInsecurePeers ? "allowed" : "refused")"])
        } else {
            logger.warning(
                "peer channel: no event key (security: none); adverts, ranging parameters and cards travel in the clear. Make a key with `nearby-bridge keygen` and set \"groupKeyFile\"")
        }
    }

    /// The bias table and the boards' offsets into the bridge's settings.
    func applyRangeCorrection(to config: inout BridgeConfig) throws {
        switch rangeBias {
        case nil, "aps011-prf64": break
        case "none":
            config.rangeCorrection.table = nil
            config.rangeCorrection.tableName = "none"
        case let other?:
            throw ValidationError("\"rangeBias\" must be \"aps011-prf64\" or \"none\", not \"\(other)\"")
        }
        for (board, entry) in calibration ?? [:] { config.rangeCorrection.offsets[board] = entry.offset }
    }

    static func load(_ path: String) throws -> RunConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read --config \(path): \(whyUnreadable(path))")
        }
        let config: RunConfig
        do {
            config = try JSONDecoder().decode(RunConfig.self, from: data)
        } catch let error as DecodingError {
            throw ValidationError("--config \(path): \(Self.describe(error))")
        } catch {
            throw ValidationError("--config \(path) is not a valid settings file: \(error)")
        }
        // It decoded, so it is JSON: the keys nothing reads.
        if let unknown = try knownKeys.unknownKeys(in: JSONSerialization.jsonObject(with: data)).first {
            throw ValidationError("--config \(path): \(unknown)")
        }
        if let group = config.group, !(0...65535).contains(group) {
            throw ValidationError("--config \(path): \"group\" must be a whole number from 0 to 65535, not \(group)")
        }
        if let code = config.countryCode, code.utf8.count != 2 || !code.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) {
            throw ValidationError("--config \(path): \"countryCode\" must be two capital letters (ISO 3166-1 alpha-2, e.g. \"DE\"), not \"\(code)\"")
        }
        return config
    }

    /// One line naming the setting and what is wrong with it, instead of the decoder's dump.
    static func describe(_ error: DecodingError) -> String {
        func key(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "the file" : "\"" + path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") + "\""
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(key(context.codingPath)) must be \(Self.kind(of: type))"
        case .valueNotFound(let type, let context):
            return "\(key(context.codingPath)) must be \(Self.kind(of: type)), not null"
        case .keyNotFound(let missing, let context):
            return "\(key(context.codingPath + [missing])) is missing"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "not valid JSON (\((context.underlyingError as NSError?)?.localizedDescription ?? context.debugDescription))"
                : "\(key(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is UInt64.Type: "a whole number"
        case is Double.Type: "a number"
        default: "a \(type)"
        }
    }

    static func parse<T: ExpressibleByArgument>(_: T.Type, _ text: String, key: String) throws -> T {
        guard let value = T(argument: text) else {
            throw ValidationError("\"\(key)\": \"\(text)\" in the config file is not valid (\(key == "uwb" ? UWBEndpoint.defaultValueDescription : "world:HOST:PORT/NODE or hciN"))")
        }
        return value
    }
}

/// Why a file could not be read, as the system says it (no such file, permission denied).
func whyUnreadable(_ path: String) -> String {
    String(cString: strerror(access(path, R_OK) == 0 ? EIO : errno))
}
