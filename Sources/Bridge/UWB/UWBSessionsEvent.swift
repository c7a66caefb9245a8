import Logging
import PeerProtocol
import Synchronization
import UCI
import UCIHost

/// What the board's session manager reports back, as node inputs.
package enum UWBSessionsEvent: Sendable {
    case started(PeerID, sessionID: UInt32, token: UInt32)
    case failed(PeerID, sessionID: UInt32, error: UCIHostError)
    /// A board that came back answered its bring-up.
    case boardReady(BoardDescription)
    case boardFailed(UCIHostError)
    /// The board is connected but has stopped working: it left a command unanswered however
    /// often it was sent (or had sessions running and said nothing for a while), and then did
    /// not answer a probe either.
    case boardUnresponsive(UCIHostError)
}
