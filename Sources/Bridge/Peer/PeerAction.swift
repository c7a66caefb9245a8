import BLE
import Events
import Logging
import PeerProtocol

/// What the machine wants done. The peer's actor runs the radio effects; the registry applies the
/// rest (routes, events, removal), in order.
enum PeerAction: Sendable, Equatable {
    // Effects, run by `PeerSession`.
    case send(PeerMessage, on: LinkID)
    case connect(BLEAddress)
    case disconnect(LinkID)
    case openUWB(UWBSessionRequest)
    /// Gives up whatever this peer has on the board (a running session, one being opened, a
    /// reserved place); the board's session manager works out what that takes.
    case closeUWB
    case reserveSharedPlace(controlee: UInt16)
    case log(Logger.Level, String, Logger.Metadata)
    // Outputs, applied by `PeerRegistry`.
    case emit(Event.Body)
    case bindLink(LinkID)
    case unbindLink(LinkID)
    case route(UWBRoute?)
    case consumeContact
    case report(SessionReport)
    case end(Event.PeerLost.Reason)
}
