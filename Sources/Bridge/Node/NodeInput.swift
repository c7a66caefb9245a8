import BLE
import GATTServer
import PeerProtocol
import UCI
import UCIHost

/// Everything a node reacts to. The radios, the board's session manager and the clock post the
/// first seven through the node's inbox; the last five are handed to `NodeCore` by the node's loop
/// (a run of range notifications as one batch) and by its effect runner (the immediate answers to
/// `NodeEffect`s).
package enum NodeInput: Sendable {
    case uwb(UCIHostEvent)
    /// The UWB board is back (replugged or reconnected) on this transport.
    case uwbReattached(any UCITransport)
    case ble(BLEEvent)
    /// A client of the rig's GATT server (a phone) wrote, or went.
    case gatt(GATTClientEvent)
    /// The board's session manager finished a request.
    case uwbSessions(UWBSessionsEvent)
    /// Time passed: timeouts, repeats of unanswered peer messages, the `nearest` report.
    case tick
    /// End gracefully (see `BridgeNode.stop`): goodbye to every peer.
    case stop
    /// Range notifications that came in a row, handled together.
    case ranges([RangeData])
    /// The adapter took our connection attempt to the peer and names the link it will open.
    case connectStarted(PeerID, LinkID)
    /// The adapter refused the connection attempt at once.
    case connectFailed(PeerID, String)
    /// The board's session manager reserved the peer a place in a one-to-many session.
    case sharedPlaceReserved(PeerID, PeerMessage.RangingParameters)
}

extension NodeInput {
    /// Inputs whose loss the next one repairs: a ranging round, an advert.
    var isSheddable: Bool {
        switch self {
        case .uwb(.notification(.rangeData)), .ble(.advertisement): true
        default: false
        }
    }
}
