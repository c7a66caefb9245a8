/// The one octet that says why the rig refused a Jetpack phone's write or stopped its session
/// (`JetpackAnswer`), so that the app can tell its user or retry with other values without the
/// rig's log. Codes up to 0x0B refuse parameters, 0x10 and up end a session the rig had accepted,
/// 0x00 acknowledges the phone's own stop.
package enum JetpackReasonCode: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    /// Stopped: the phone asked (or nothing was running).
    case requested = 0x00
    /// The write is not a message of the Jetpack layout (magic, version, kind, length, role or
    /// update-rate octet); the rig's log names the field.
    case malformed = 0x01
    /// A config type the board does not run (the rig runs 1, `CONFIG_UNICAST_DS_TWR`).
    case configType = 0x02
    case channel = 0x03
    case preambleIndex = 0x04
    /// Session id 0, which UCI keeps for its RF test session (Jetpack would derive one; the
    /// rig needs both sides to agree on it up front).
    case sessionID = 0x05
    /// A sub-session id other than 0.
    case subSessionID = 0x06
    /// A session key of another length than the board uses (8: static STS).
    case sessionKey = 0x07
    /// The update rate's interval is below the board's minimum or not one of Android's presets.
    case updateRate = 0x08
    case slotDuration = 0x09
    /// The board cannot take the role opposite the phone's.
    case role = 0x0A
    /// A session is starting, ranging or stopping: stop it first.
    case busy = 0x0B
    /// Stopped: the board failed a command for the session, or did not start it in time.
    case boardFailed = 0x10
    /// Stopped: the board ended the session on its own.
    case boardStopped = 0x11

    /// The code for parameters the rig could not run.
    package init(_ error: JetpackParametersError) {
        switch error {
        case .subSessionID: self = .subSessionID
        case .configuration(let error):
            switch error {
            case .noUWBConfiguration: self = .malformed
            case .reservedSessionID: self = .sessionID
            case .unsupportedConfigID: self = .configType
            case .unsupportedChannel: self = .channel
            case .unsupportedPreambleIndex: self = .preambleIndex
            case .intervalBelowMinimum, .intervalNotAPreset: self = .updateRate
            case .slotBelowMinimum, .unsupportedSlotDuration: self = .slotDuration
            case .sessionKeyLength: self = .sessionKey
            case .unsupportedRole: self = .role
            }
        }
    }

    package var description: String {
        switch self {
        case .requested: "requested"
        case .malformed: "malformed"
        case .configType: "config type"
        case .channel: "channel"
        case .preambleIndex: "preamble index"
        case .sessionID: "session id"
        case .subSessionID: "sub-session id"
        case .sessionKey: "session key"
        case .updateRate: "update rate"
        case .slotDuration: "slot duration"
        case .role: "role"
        case .busy: "busy"
        case .boardFailed: "board failed"
        case .boardStopped: "board stopped"
        }
    }
}
