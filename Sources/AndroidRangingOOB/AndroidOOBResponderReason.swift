import UCI

/// Why an `AndroidOOBResponder` or a `JetpackResponder` refused a phone's message or ended a board
/// session on its own: the one log line each such event gets. Cases carry ids, codes and the parse
/// errors' field names and values, never the session key. Each description is one sentence.
package enum AndroidOOBResponderReason: Equatable, Sendable, CustomStringConvertible {
    /// The write is not an OOB message (truncated, unknown id or version, bad layout).
    case malformedMessage(OOBMessageError)
    /// A well-formed Configuration this board cannot run; no board command was sent.
    case refusedConfiguration(RangingConfigurationError)
    /// A Configuration that configures UWB but does not start it: this rig starts on
    /// configuration only.
    case configurationDoesNotStartUWB
    /// A Configuration while a session is starting, ranging or stopping.
    case configurationWhileBusy(session: UInt32)
    /// A message only a responder sends (Capability Response, Configuration Response, Motion
    /// Notification).
    case responderMessageFromPhone(OOBMessageID)
    /// The board failed a command for the session while it started or ranged.
    case boardFailed(session: UInt32, status: StatusCode)
    /// The board deinitialised the session on its own.
    case boardDroppedSession(session: UInt32)
    /// The board did not report ACTIVE within the start timeout.
    case startTimedOut(session: UInt32, milliseconds: Int64)
    /// The board failed the DEINIT.
    case stopFailed(session: UInt32, status: StatusCode)
    /// The board did not report DEINIT within the stop timeout.
    case stopTimedOut(session: UInt32, milliseconds: Int64)
    /// The link ended while the session started or ranged.
    case linkEnded(session: UInt32)
    /// A write on the Jetpack characteristic that is not a Jetpack message.
    case malformedJetpackMessage(JetpackMessageError)
    /// Well-formed Jetpack parameters this rig cannot run; no board command was sent.
    case refusedJetpackParameters(JetpackParametersError)
    /// Jetpack parameters while a session is starting, ranging or stopping.
    case jetpackParametersWhileBusy(session: UInt32)

    package var description: String {
        switch self {
        case .malformedMessage(let error): "Refused a phone's OOB write: \(Self.clause(error.description))."
        case .refusedConfiguration(let error):
            "Refused a phone's Ranging Configuration, no board command sent: \(Self.clause(error.description))."
        case .configurationDoesNotStartUWB: "Refused a phone's Ranging Configuration that does not start UWB."
        case .configurationWhileBusy(let session):
            "Refused a phone's Ranging Configuration while session \(Self.hex(session)) runs; the phone must stop it first."
        case .responderMessageFromPhone(let id): "Refused a phone's \(id) message: only a responder sends it."
        case let .boardFailed(session, status):
            "Session \(Self.hex(session)) failed on the board (\(status)); it is stopped and the phone told to stop."
        case .boardDroppedSession(let session):
            "The board deinitialised session \(Self.hex(session)) on its own; the phone is told to stop."
        case let .startTimedOut(session, milliseconds):
            "The board did not make session \(Self.hex(session)) active within \(milliseconds) ms; it is stopped."
        case let .stopFailed(session, status):
            "Deinitialising session \(Self.hex(session)) failed on the board (\(status)); the phone is not told it stopped."
        case let .stopTimedOut(session, milliseconds):
            "The board did not deinitialise session \(Self.hex(session)) within \(milliseconds) ms; the phone is not told it stopped."
        case .linkEnded(let session): "The phone's link ended; its session \(Self.hex(session)) is stopped."
        case .malformedJetpackMessage(let error): "Refused a phone's Jetpack write: \(Self.clause(error.description))."
        case .refusedJetpackParameters(let error):
            "Refused a phone's Jetpack parameters, no board command sent: \(Self.clause(error.description))."
        case .jetpackParametersWhileBusy(let session):
            "Refused a phone's Jetpack parameters while session \(Self.hex(session)) runs; the phone must stop it first."
        }
    }

    /// A session id as UCI logs print it: 0x12345678.
    private static func hex(_ session: UInt32) -> String {
        let digits = String(session, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// An error's one sentence as a clause after a colon.
    private static func clause(_ sentence: String) -> String {
        sentence.hasSuffix(".") ? String(sentence.dropLast()) : sentence
    }
}
