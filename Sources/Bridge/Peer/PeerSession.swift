import BLE
import Events
import Logging
import PeerProtocol
import UCIHost

/// What every peer session shares: who we are, the radios, the clock.
struct PeerContext: Sendable {
    let identity: NodeIdentity
    let config: BridgeConfig
    /// The board's sessions, booked and run by their one owner.
    let uwbSessions: UWBSessions
    let ble: any BLEAdapter
    let logger: Logger
    let time: any TimeSource
    /// The range correction for the board the node has now.
    let boardCorrection: BoardCorrection
    /// Each link's security: how a message becomes the bytes on the air.
    let channels: PeerChannels
}

/// One peer: its protocol state (a `PeerMachine`) and the radio effects it asks for.
///
/// The session never waits on a radio: BLE sends, connects and disconnects return at once (the
/// adapter queues or fails them), and UWB sessions are requests to `UWBSessions`, whose outcome
/// comes back later as an input. So handling an input takes microseconds whatever the board or
/// the peer does, and the registry can feed every peer in turn.
actor PeerSession {
    nonisolated let peer: PeerID
    private var machine: PeerMachine
    private let context: PeerContext
    private let logger: Logger

    init(peer: PeerID, name: String, context: PeerContext, seed: UInt64, granted: Bool) {
        self.peer = peer
        self.context = context
        self.machine = PeerMachine(
            peer: peer, name: name, identity: context.identity, config: context.config,
            boardRunsProvisionedSTS: context.uwbSessions.supportsProvisionedSTS, seed: seed, granted: granted,
            now: context.time.nowMilliseconds())
        var logger = context.logger
        logger[metadataKey: "peer"] = "\(peer)"
        self.logger = logger
    }

    /// Runs `input` through the machine, performs its radio effects (feeding their immediate
    /// answers back in), and returns what is for the registry, in order.
    func handle(_ input: PeerInput) async -> [PeerAction] {
        var inputs = [input]
        var outputs: [PeerAction] = []
        while !inputs.isEmpty {
            for action in machine.receive(inputs.removeFirst(), now: context.time.nowMilliseconds()) {
                switch action {
                case .send(let message, let link):
                    guard let frame = context.channels.frame(message, on: link) else {
                        logger.debug("send on a closed link", metadata: ["link": "\(link)"])
                        continue
                    }
                    do {
                        try await context.ble.send(frame, on: link)
                    } catch BLEAdapterError.unknownLink {
                        // The link closed under us; its close is on its way as an input.
                        logger.debug("send on a closed link", metadata: ["link": "\(link)"])
                    } catch {
                        logger.warning("send failed", metadata: ["error": "\(error)"])
                    }
                case .connect(let address):
                    do {
                        inputs.append(.connectStarted(try await context.ble.connect(to: address)))
                    } catch {
                        PeerRegistry.connectFailed(node: context.identity.peerID)
                        inputs.append(.connectFailed("\(error)"))
                    }
                case .disconnect(let link):
                    await context.ble.disconnect(link)
                case .openUWB(let request):
                    context.uwbSessions.open(peer: peer, request)
                case .closeUWB:
                    context.uwbSessions.close(peer: peer)
                case .reserveSharedPlace(let controlee):
                    inputs.append(.sharedPlaceReserved(context.uwbSessions.reserve(peer: peer, controlee: controlee)))
                case .log(let level, let message, let metadata):
                    logger.log(level: level, "\(message)", metadata: metadata)
                case .emit, .bindLink, .unbindLink, .route, .consumeContact, .report, .end:
                    outputs.append(action)
                }
            }
        }
        return outputs
    }
}
