/// What the node does for one phone's Android ranging OOB exchange, in the order given.
package enum AndroidOOBResponderAction: Equatable, Sendable {
    /// Notify the phone one whole OOB message on the OOB service's notify characteristic.
    case sendToPhone([UInt8])
    /// SESSION_INIT with the configuration's session id, SESSION_SET_APP_CONFIG with its TLVs,
    /// SESSION_START; report ACTIVE, DEINIT and failures back as inputs.
    case startBoardSession(AndroidSessionConfiguration)
    /// SESSION_STOP if the session may be active, then SESSION_DEINIT.
    case stopBoardSession(sessionID: UInt32)
    /// One line for the rig's log. Never carries the session key.
    case log(AndroidOOBResponderReason)
    /// The machine is done (the link has gone); the node drops it.
    case close
}
