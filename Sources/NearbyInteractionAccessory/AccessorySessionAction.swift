/// What the node does for one phone's accessory session, in the order given.
package enum AccessorySessionAction: Equatable, Sendable {
    /// Notify the phone (on the TX characteristic of the service it wrote on).
    case sendToPhone(AccessoryMessage)
    /// SESSION_INIT with the configuration's session id, SESSION_SET_APP_CONFIG with its TLVs
    /// (and the dialect's report TLVs), SESSION_START; report a failure as
    /// `boardCommandFailed`, the board's notifications as `boardSessionStatus`.
    case startBoardSession(AccessorySessionConfiguration)
    /// Undo whatever of the session's start went through: SESSION_STOP if it may be active,
    /// then SESSION_DEINIT; report a failed DEINIT as `boardCommandFailed`.
    case stopBoardSession(sessionID: UInt32)
    /// One line for the rig's log (stderr): why a message was refused or a session ended other
    /// than by the phone's stop. Never carries the static STS IV or a blob's octets.
    case log(AccessorySessionReason)
    /// The machine is done (the phone has gone); the node drops it.
    case sessionEnded
}
