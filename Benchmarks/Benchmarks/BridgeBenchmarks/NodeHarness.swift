import BLE
import Bridge
import Events
import Logging
import PeerProtocol
import UCI
import UCIHost

/// A real `BridgeNode` on in-memory radios: a scripted UWBS behind a `MemoryTransport` (raw UCI
/// bytes both ways) and a scripted Bluetooth air. Peers introduce themselves and agree a session
/// through the real peer protocol, so the node ranges with them exactly as a rig would; the
/// benchmark then writes SESSION_INFO_NTF bytes into the transport.
final class NodeHarness: Sendable {
    let node: BridgeNode
    let air: ScriptedAir
    let tracker = WorkTracker()
    private let device: MemoryTransport
    private let uwbs: Task<Void, Never>
    private let loop: Task<Void, Never>
    /// Ours is the highest peer id, so every peer is the initiator and UWB controller.
    static let identity = NodeIdentity(
        peerID: PeerID(.max - 1), name: "rig", group: 1, card: try! ProfileCard(json: #"{"name":"rig"}"#), uwbShortAddress: 0x0001)

    init(events: EventStream, rangingSessions: Int, maxPeers: Int) async throws {
        let (host, device) = MemoryTransport.pair()
        self.device = device
        air = ScriptedAir()
        var config = BridgeConfig()
        config.rangingSessions = rangingSessions
        config.maxPeers = maxPeers
        var logger = Logger(label: "benchmark")
        logger.logLevel = .critical
        let node = BridgeNode(
            identity: Self.identity, config: config, uwbTransport: host, ble: air, events: events, time: WallClock(),
            logger: logger, seed: 1, tracker: tracker)
        self.node = node
        uwbs = Task { await ScriptedUWBS.serve(device) }
        try await node.start()
        loop = Task { await node.run() }
    }

    /// Peers `0..<count` find us (advert), connect, say hello and propose a session we accept.
    func connectPeers(_ count: Int) async {
        for index in 0..<count {
            let peer = PeerID(UInt64(index + 1))
            let link = LinkID(index + 1)
            let address = BLEAddress(bytes: [UInt8(index & 0xFF), UInt8(index >> 8), 0, 0, 0, 0xC0])
            air.deliver(.advertisement(address, rssi: -60, data: Fixtures.advert(peer: peer, uwbAddress: Fixtures.address(ofPeer: index))))
            air.deliver(.linkOpened(link, peer: address, initiatedLocally: false))
            air.deliver(.linkData(link, PeerMessage.hello(.init(peerID: peer, group: 1, name: "peer")).encoded()))
            let parameters = PeerMessage.RangingParameters(
                sessionID: Fixtures.handle(ofPeer: index), channel: 9, preambleCodeIndex: 10,
                controllerAddress: Fixtures.address(ofPeer: index), controleeAddress: Self.identity.uwbShortAddress,
                vendorID: 1, staticSTSIV: [1, 2, 3, 4, 5, 6], rangingIntervalMilliseconds: 100)
            air.deliver(.linkData(link, PeerMessage.rangingParameters(parameters).encoded()))
            await tracker.waitUntilIdle()
        }
    }

    /// Bytes from the UWBS to the host, as one read.
    func fromDevice(_ bytes: [UInt8]) async {
        try? await device.write(bytes)
    }

    func stop() async {
        await node.stop()
        await loop.value
        device.close()
        await uwbs.value
    }
}

/// The device side of FiRa UCI, just enough to bring a node up and start sessions: it answers
/// every command with OK, gives session `id` the handle `id` (the benchmarks choose ids that are
/// their handles), and reports `sessions` as its session limit.
enum ScriptedUWBS {
    static func serve(_ device: MemoryTransport) async {
        var decoder = UCIStreamDecoder()
        while let bytes = try? await device.read() {
            decoder.append(bytes)
            while let message = try? decoder.next() {
                guard let command = try? UCICommand(message) else { continue }
                try? await device.write(answer(command).message.encoded())
            }
        }
    }

    private static func answer(_ command: UCICommand) -> UCIResponse {
        switch command {
        case .deviceReset: .deviceReset(.ok)
        case .getDeviceInfo:
            .deviceInfo(
                .ok,
                DeviceInfo(
                    uciVersion: .init(major: 2, minor: 0, maintenance: 0), macVersion: .init(major: 1, minor: 3, maintenance: 0),
                    phyVersion: .init(major: 1, minor: 3, maintenance: 0), uciTestVersion: .init(major: 1, minor: 1, maintenance: 0),
                    vendorData: []))
        case .getCapsInfo: .capsInfo(.ok, [])
        case .sessionInit(let id, _): .sessionInit(.ok, sessionHandle: id)
        case .sessionDeinit: .sessionDeinit(.ok)
        case .setAppConfig: .setAppConfig(.ok, [])
        case .getAppConfig: .getAppConfig(.ok, [])
        case .updateControllerMulticastList: .updateControllerMulticastList(.ok, [])
        case .sessionStart: .sessionStart(.ok)
        case .sessionStop: .sessionStop(.ok)
        }
    }
}

/// A Bluetooth adapter whose air is the benchmark: it delivers what the benchmark scripts and
/// swallows what the node sends.
final class ScriptedAir: BLEAdapter {
    let backendName = "scripted"
    private let handler = CallbackSlot<BLEEvent>()

    func deliver(_ event: BLEEvent) {
        handler(event)
    }

    func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws { handler.install(events) }
    func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {}
    func startScanning() async throws {}
    func connect(to peer: BLEAddress) async throws -> LinkID { 0 }
    func send(_ sdu: [UInt8], on link: LinkID) async throws {}
    func disconnect(_ link: LinkID) async {}
    func stop() async {}
}
