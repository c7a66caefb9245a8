import UCI

/// Why an `AccessorySession` refused a phone's message or ended a board session on its own: the
/// one log line each such event gets. Every case carries only values that are safe to log (ids,
/// status and reason codes, the parse errors' field names and values): never the static STS IV,
/// never a blob's octets. Each description is one sentence.
package enum AccessorySessionReason: Equatable, Sendable, CustomStringConvertible {
    /// The phone's write is not an accessory message.
    case malformedMessage(AccessoryMessageError)
    /// The phone's 0x0B blob cannot be a session on this board; no board command was sent.
    case malformedConfiguration(ShareableConfigurationError)
    /// The phone wrote a message only an accessory sends (0x01, 0x02, 0x03).
    case accessoryMessageFromPhone(AccessoryMessageID)
    /// While starting, the board went IDLE with an error reason (it refused SESSION_START).
    case boardRefusedStart(session: UInt32, reason: ReasonCode)
    /// While starting, the board deinitialised the session.
    case boardDroppedStart(session: UInt32, reason: ReasonCode)
    /// While starting, one of SESSION_INIT, SET_APP_CONFIG, START failed.
    case startCommandFailed(session: UInt32, status: StatusCode)
    /// The board did not report ACTIVE within the start timeout.
    case startTimedOut(session: UInt32, milliseconds: Int64)
    /// While ranging, the board went IDLE on its own.
    case boardStoppedRanging(session: UInt32, reason: ReasonCode)
    /// While ranging, the board deinitialised the session on its own.
    case boardDroppedSession(session: UInt32, reason: ReasonCode)
    /// While ranging, a command the node sent for the session failed; ranging goes on.
    case commandFailedWhileRanging(session: UInt32, status: StatusCode)
    /// While stopping, SESSION_DEINIT failed; the machine waits for the board until the stop
    /// timeout.
    case deinitFailed(session: UInt32, status: StatusCode)
    /// The board did not report DEINIT within the stop timeout.
    case stopTimedOut(session: UInt32, milliseconds: Int64)
    /// A valid 0x0B with another configuration while a session runs: it is stopped first.
    case replacingSession(old: UInt32, new: UInt32)
    /// The phone disconnected while its board session was starting or ranging.
    case phoneDisconnected(session: UInt32)

    package var description: String {
        switch self {
        case .malformedMessage(let error): "Refused a phone's write: \(Self.clause(error.description))."
        case .malformedConfiguration(let error):
            "Refused a phone's configure and start (0x0B), no board command sent: \(Self.clause(error.description))."
        case .accessoryMessageFromPhone(let id): "Refused a phone's \(id) message: only an accessory sends it."
        case let .boardRefusedStart(session, reason):
            "The board refused to start session \(Self.hex(session)) (\(reason)); the phone is not told it started."
        case let .boardDroppedStart(session, reason):
            "The board deinitialised session \(Self.hex(session)) while starting it (\(reason)); the phone is not told it started."
        case let .startCommandFailed(session, status):
            "Starting session \(Self.hex(session)) failed on the board (\(status)); the phone is not told it started."
        case let .startTimedOut(session, milliseconds):
            "The board did not make session \(Self.hex(session)) active within \(milliseconds) ms; it is stopped, "
                + "and the phone is not told it started."
        case let .boardStoppedRanging(session, reason):
            "The board stopped ranging in session \(Self.hex(session)) (\(reason)); it is deinitialised and the phone told it stopped."
        case let .boardDroppedSession(session, reason):
            "The board deinitialised session \(Self.hex(session)) while ranging (\(reason)); the phone is told it stopped."
        case let .commandFailedWhileRanging(session, status):
            "A command for session \(Self.hex(session)) failed on the board (\(status)) while it ranges; ranging goes on."
        case let .deinitFailed(session, status):
            "Deinitialising session \(Self.hex(session)) failed on the board (\(status)); waiting for the board until the stop timeout."
        case let .stopTimedOut(session, milliseconds):
            "The board did not deinitialise session \(Self.hex(session)) within \(milliseconds) ms; the phone is not told it stopped."
        case let .replacingSession(old, new):
            "The phone configured session \(Self.hex(new)) while session \(Self.hex(old)) runs; the old one is stopped first."
        case .phoneDisconnected(let session):
            "The phone disconnected; its session \(Self.hex(session)) is stopped."
        }
    }

    /// A session id as UCI logs print it: 0x12345678.
    private static func hex(_ session: UInt32) -> String {
        let digits = String(session, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// An error's one sentence as a clause after a colon: without its closing full stop.
    private static func clause(_ sentence: String) -> String {
        sentence.hasSuffix(".") ? String(sentence.dropLast()) : sentence
    }
}
