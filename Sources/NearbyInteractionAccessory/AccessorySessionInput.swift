import UCI

/// What happens to one phone's accessory session: the phone wrote, the board reported, the
/// phone left, or time passed. The time itself is `AccessorySession.receive`'s `now`.
package enum AccessorySessionInput: Equatable, Sendable {
    /// One write of the phone's on the NI (or UART) RX characteristic, as it came: the machine
    /// parses it (`AccessoryMessage`).
    case phoneWrote([UInt8])
    /// The board's SESSION_STATUS_NTF. The node may pass every one it gets: a session id that
    /// is not this phone's is ignored.
    case boardSessionStatus(session: UInt32, state: SessionState, reason: ReasonCode)
    /// A command the node sent for the session failed: SESSION_INIT, SESSION_SET_APP_CONFIG or
    /// SESSION_START while starting (a status other than OK in the response, or no response),
    /// SESSION_DEINIT while stopping. A failed SESSION_STOP before a DEINIT is not reported: the
    /// DEINIT that follows settles the session.
    case boardCommandFailed(session: UInt32, status: StatusCode)
    /// The phone's BLE link is gone.
    case phoneDisconnected
    /// Time passed: the deadlines are checked against `now`.
    case tick

    /// The input a board's notification is for this machine: SESSION_STATUS_NTF only.
    package init?(_ notification: UCINotification) {
        guard case let .sessionStatus(session, state, reason) = notification else { return nil }
        self = .boardSessionStatus(session: session, state: state, reason: reason)
    }
}
