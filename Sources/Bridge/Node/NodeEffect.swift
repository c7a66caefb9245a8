import BLE
import GATTServer
import Events
import PeerProtocol
import UCI

/// What `NodeCore` asks of the world after an input, in order. The node's effect runner performs
/// each; none of them waits (`BLEAdapter`'s link calls and `UWBSessions`' requests return at
/// once), and the ones with an immediate answer hand it back to the core as an input
/// (`connectStarted`/`connectFailed`, `sharedPlaceReserved`), so every decision stays in the core.
enum NodeEffect: Sendable, Equatable {
    /// One SDU, already framed for the link's security (sealed on a v2 link).
    case send([UInt8], on: LinkID)
    /// Open a link to `peer`'s address; the runner answers with `connectStarted` or `connectFailed`.
    case connect(BLEAddress, for: PeerID)
    case disconnect(LinkID)
    /// Book a UWB session on the board for `peer`; the outcome comes back as `.uwbSessions`.
    case openUWB(UWBSessionRequest, for: PeerID)
    /// Notify a GATT client (a phone) on one of the rig's characteristics.
    case notify(GATTClient, characteristic: GATTUUID, [UInt8])
    /// Open a phone's session on the board: its id and the app config its shareable
    /// configuration maps to; the outcome comes back as `.uwbSessions`.
    case openPhoneUWB(sessionID: UInt32, appConfig: [AppConfigTLV], for: PeerID)
    /// Give up whatever `peer` (a rig or a phone) has on the board.
    case closeUWB(PeerID)
    /// Reserve `peer` a place in a one-to-many session we control; the runner answers with
    /// `sharedPlaceReserved`.
    case reserveSharedPlace(controlee: UInt16, for: PeerID)
    /// The board went away: its session manager forgets every session on it.
    case forgetBoardSessions
    /// Events, with the node's tag, to stamp and write.
    case emit([Event])
}
