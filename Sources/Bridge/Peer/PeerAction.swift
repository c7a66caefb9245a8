import BLE
import Events
import Logging
import PeerProtocol

/// What the machine wants done, in order: `NodeCore` turns the radio effects into the node's
/// effects and applies the rest (routes, events, removal) itself.
enum PeerAction: Sendable, Equatable {
    // Radio effects, which `NodeCore` hands to the effect runner.
    case send(PeerMessage, on: LinkID)
    case connect(BLEAddress)
    case disconnect(LinkID)
    case openUWB(UWBSessionRequest)
    /// Gives up whatever this peer has on the board (a running session, one being opened, a
    /// reserved place); the board's session manager works out what that takes.
    case closeUWB
    case reserveSharedPlace(controlee: UInt16)
    case log(Logger.Level, String, Logger.Metadata)
    // Outputs, which `NodeCore` applies.
    case emit(Event.Body)
    case bindLink(LinkID)
    case unbindLink(LinkID)
    case route(UWBRoute?)
    case consumeContact
    case report(SessionReport)
    case end(Event.PeerLost.Reason)
}
