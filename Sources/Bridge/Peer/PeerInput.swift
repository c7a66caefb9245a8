import BLE
import PeerProtocol
import UCI

/// Everything that happens to one peer, as the machine sees it: radio input, the node's
/// decisions, and the completions of the effects it asked for.
enum PeerInput: Sendable {
    case heard(Advertisement, name: String?, address: BLEAddress, rssi: Int)
    /// The adapter accepted our `.connect` and names the link it will open.
    case connectStarted(LinkID)
    case connectFailed(String)
    /// Our v2 link opened and our handshake went out: the answer is due within the handshake timeout.
    case handshakeStarted(LinkID)
    /// Our link is up (after the handshake, on a v2 link, whose ranging secret comes with it).
    case outgoingLinkOpened(LinkID, rangingSecret: [UInt8]?)
    /// A peer connected to us and its first message was a valid `hello`.
    case incomingHello(LinkID, PeerMessage.Hello, retryAfter: Int64, rangingSecret: [UInt8]?)
    case message(PeerMessage, on: LinkID, ProximityView)
    case linkClosed(LinkID)
    /// Our link ended before it opened because whoever answers at its address refused us: the v2
    /// handshake failed (no event key there) or the host refused the channel (no bridge listens
    /// there). Either way the address is backed off and its adverts stop counting as the peer.
    case refused(LinkID)
    /// The answer to `.reserveSharedPlace`.
    case sharedPlaceReserved(PeerMessage.RangingParameters)
    /// The scheduler gives this peer one of the radio's ranging sessions, or takes it back.
    case granted
    case revoked(retryAfter: Int64)
    /// Proximity saw a contact in this peer's ranges.
    case contact(distance: Double)
    case uwbStarted(sessionID: UInt32, token: UInt32)
    case uwbFailed(sessionID: UInt32, error: String)
    /// The UWBS ended our session on its own (e.g. max retries).
    case uwbSessionEnded(ReasonCode)
    /// The board went away with every session on it, or came back.
    case uwbLost
    case uwbBack
    case tick(ProximityView)
    /// Ends everything with this peer (it is being removed, or the node stops).
    case close(sayGoodbye: Bool)
}
