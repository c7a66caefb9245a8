import BLE
import Bridge
import Events
import Glibc
import Logging
import PeerProtocol
import StreamIO
import Synchronization
import SystemPackage
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
    private let device: MemoryTransport?
    /// With `overSocket`: the board at the far end of a socket pair, read by a real transport thread.
    let socketDevice: SocketUWBS?
    private let uwbs: Task<Void, Never>
    private let loop: Task<Void, Never>
    /// The node's event loop (with `eventLoop`), ended by `stop`: one turn's loop thread does not
    /// outlive it.
    private let nodeLoop: EventLoop?
    /// Ours is the highest peer id, so every peer is the initiator and UWB controller.
    static let identity = NodeIdentity(
        peerID: PeerID(.max - 1), name: "rig", group: 1, card: try! ProfileCard(json: #"{"name":"rig"}"#), uwbShortAddress: 0x0001)

    /// - Parameter overSocket: the board sits behind a socket pair and the node reads it through
    ///   `StreamConnection` (a reader thread blocked in `read(2)`, as for a tty or TCP board)
    ///   instead of an in-memory queue.
    ///   With `eventLoop` as well, the node's `EventLoop` reads the socket and runs the node (the
    ///   `run` command's set-up): no reader thread, no hand-off.
    init(events: EventStream, rangingSessions: Int, maxPeers: Int, overSocket: Bool = false, eventLoop: Bool = false) async throws {
        let host: any UCITransport
        var nodeLoop: EventLoop?
        if overSocket {
            var fds: [Int32] = [0, 0]
            precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            if eventLoop { nodeLoop = EventLoop(name: "nb-node-loop") }
            // Its reader thread gets a name for the per-thread figures: the one that appears.
            let before = Set(threadTimes().keys)
            host = StreamConnection(fd: FileDescriptor(rawValue: fds[0]), description: "socketpair", loop: nodeLoop)
            for tid in Set(threadTimes().keys).subtracting(before) { nameThread(tid, "nb-uci-reader") }
            socketDevice = SocketUWBS(fd: fds[1])
            device = nil
            uwbs = Task {}
        } else {
            let (hostSide, device) = MemoryTransport.pair()
            host = hostSide
            self.device = device
            socketDevice = nil
            uwbs = Task { await ScriptedUWBS.serve(device) }
        }
        air = ScriptedAir()
        var config = BridgeConfig()
        config.rangingSessions = rangingSessions
        config.maxPeers = maxPeers
        var logger = Logger(label: "benchmark")
        logger.logLevel = .critical
        let node = BridgeNode(
            identity: Self.identity, config: config, uwbTransport: host, ble: air, events: events, time: SystemClock(),
            logger: logger, seed: 1, tracker: tracker, loop: nodeLoop)
        self.node = node
        self.nodeLoop = nodeLoop
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
        if let device { try? await device.write(bytes) } else { socketDevice?.send(bytes) }
    }

    func stop() async {
        await node.stop()
        await loop.value
        device?.close()
        socketDevice?.close()
        await uwbs.value
        nodeLoop?.shutdown()
        await nodeLoop?.waitUntilEnded()
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

    static func answer(_ command: UCICommand) -> UCIResponse {
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
        case .androidSetCountryCode: .androidSetCountryCode(.ok)
        }
    }
}

/// The scripted UWBS on a socket: a thread answers commands with `ScriptedUWBS`'s answers;
/// `send` writes notification bytes from any thread.
final class SocketUWBS: @unchecked Sendable {
    let fd: Int32
    /// Commands received, by kind ("sessionInit", ...).
    let commands = Mutex<[String: Int]>([:])

    init(fd: Int32) {
        self.fd = fd
        IOThread.detach(name: "nb-uwbs-commands") { [self] in serve() }
    }

    private func serve() {
        var decoder = UCIStreamDecoder()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            // Waits in poll for input only: a thread blocked in read(2) on a socket also wakes
            // whenever the peer consumes what this end sent (every notification), which would
            // bill the board's wake-ups to the host.
            var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&request, 1, -1) >= 0 || errno == EINTR else { return }
            guard request.revents != 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            decoder.append(Array(buffer[0..<count]))
            while let message = try? decoder.next() {
                guard let command = try? UCICommand(message) else { continue }
                let kind = String(describing: command).prefix { $0 != "(" }
                commands.withLock { $0[String(kind), default: 0] += 1 }
                send(ScriptedUWBS.answer(command).message.encoded())
            }
        }
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent > 0 { offset += sent } else if errno != EINTR { return }
        }
    }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }
}

/// A Bluetooth adapter whose air is the benchmark: it delivers what the benchmark scripts and
/// swallows what the node sends.
final class ScriptedAir: BLEAdapter {
    let backendName = "scripted"
    let boundAddresses = false
    private let handler = CallbackSlot<BLEEvent>()

    func deliver(_ event: BLEEvent) {
        handler(event)
    }

    func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws { handler.install(events) }
    func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {}
    func startScanning() async throws {}
    func connect(to peer: BLEAddress) throws -> LinkID { 0 }
    func send(_ sdu: [UInt8], on link: LinkID) throws {}
    func disconnect(_ link: LinkID) {}
    func stop() async {}
}
