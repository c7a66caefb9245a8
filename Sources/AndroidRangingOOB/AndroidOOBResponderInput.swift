import UCI

/// What happens to one phone's Android ranging OOB exchange: the phone wrote, the board
/// reported on the session, the link ended, or time passed. The time itself is
/// `AndroidOOBResponder.receive`'s `now`.
package enum AndroidOOBResponderInput: Equatable, Sendable {
    /// One write on the OOB service's write characteristic: one whole OOB message, as it came
    /// (`AndroidOOBGATTService`'s framing); the machine parses it.
    case phoneWrote([UInt8])
    /// The board reported the session ACTIVE: it ranges.
    case boardSessionActive(session: UInt32)
    /// The board reported the session DEINIT: it is gone, whoever asked.
    case boardSessionStopped(session: UInt32)
    /// A command for the session failed on the board (SESSION_INIT, SET_APP_CONFIG or START
    /// while starting; anything while ranging; DEINIT while stopping).
    case boardSessionFailed(session: UInt32, status: StatusCode)
    /// The BLE link to the phone is gone.
    case linkEnded
    /// Time passed: the deadlines are checked against `now`.
    case tick
}
