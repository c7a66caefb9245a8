import ArgumentParser
import BLE
import BLEBlueZ
import Capture
import Bridge
import Foundation
import GATTServer
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
        var config = BridgeConfig()
        config.proximity = proximity.config
        config.rangingSessions = settings.rangingSessions
        if let maxPeers = settings.maxPeers { config.maxPeers = maxPeers }
        if let controlees = settings.controleesPerSession { config.controleesPerSession = max(1, controlees) }
        if let dialect = settings.uwbDialect { config.uwbDialect = dialect }
        config.uwb.countryCode = settings.countryCode
        try settings.applyRangeCorrection(to: &config)
        try settings.applySecurity(to: &config, logger: logger)
        let phoneServices = try settings.phoneTransports(applyingTo: &config)
        var phoneAdapter: String?
        switch ble {
        case .bluez(let adapter):
            config.bluetoothRequired = true
            if !phoneServices.isEmpty { phoneAdapter = adapter }
        case .world:
            guard phoneServices.isEmpty else {
                throw ValidationError("\"phoneServices\" needs a Bluetooth adapter (--ble hciN); in a world, phones are scenario nodes (\"kind\": \"iphone\")")
            }
        }
        // The node's thread: it reads a tcp or tty board itself, so a notification goes from
        // `read` to its event line without a thread hand-off (docs/PERFORMANCE.md).
        let loop = EventLoop(name: "node")
        let (transport, reconnect, adapter) = try RigRadios.open(
            uwb: uwb, ble: ble, identityResolvingKey: config.security.groupKey.map { KeySchedule.identityResolvingKey($0, peer: peerID) },
            loop: loop, logger: logger)
        var radios: (any UCITransport, any BLEAdapter) = (transport, adapter)
        var reopen = reconnect
        let recorder = try capture?.recorder(node: displayName)
        if let recorder {
            let clock: @Sendable () -> Int64 = { SystemClock().wallMilliseconds() * 1000 }
            radios = (recorder.wrap(uwb: transport, clock: clock), recorder.wrap(ble: adapter, psm: BridgeConfig().psm, clock: clock))
            reopen = { recorder.wrap(uwb: try await reconnect(), clock: clock) }
        }

        var random = SystemRandomNumberGenerator()
        let identity = NodeIdentity(
            peerID: peerID, name: displayName, group: group, card: card,
            uwbShortAddress: UInt16.random(in: 1...0xFFFE, using: &random))
        logger.notice("peer id \(identity.peerID), UWB address \(identity.uwbShortAddress)")
        let seed = random.next()
        let phoneServer = try phoneAdapter.map { adapter in
            try PhoneServer.start(services: phoneServices, adapter: adapter, deviceName: displayName, logger: logger)
        }
        var gatt = phoneServer?.backend
        if let recorder, let served = gatt {
            let database = PhoneTransport.database(offering: phoneServices, deviceName: phoneServer?.deviceName)
            gatt = recorder.wrap(gatt: served, database: database) { SystemClock().wallMilliseconds() * 1000 }
        }
        let node = BridgeNode(
            identity: identity, config: config, uwbTransport: radios.0, ble: radios.1, events: events,
            time: SystemClock(), logger: logger, seed: seed, reconnectUWB: reopen, loop: loop, gatt: gatt)
        if let capture {
            try CaptureManifest(
                stepMilliseconds: nil, durationMilliseconds: nil, proximity: .init(proximity.config),
                nodes: [.init(displayName, node, seed: seed, phoneServices: phoneServices, gattDeviceName: phoneServer?.deviceName)]
            ).write(to: capture.path)
            try CaptureSecrets([(displayName, node.security)]).write(to: capture.path)
        }
        return NodeService(node: node, stop: context.stop)
    }
}
