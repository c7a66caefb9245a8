/// Why well-formed Jetpack parameters cannot become a session on this rig: a rule of the Jetpack
/// path itself, or the board's own check (`AndroidBoardCapabilities.validate`, the same one the OOB
/// path's configurations pass). Each description is one sentence, for the log line a refusal gets.
package enum JetpackParametersError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A sub-session id other than 0: Jetpack sets one only for provisioned-STS individual keys
    /// (config type 7), which this rig does not run.
    case subSessionID(UInt32)
    /// What the board refused, as for a Ranging Configuration.
    case configuration(RangingConfigurationError)

    package var description: String {
        switch self {
        case .subSessionID(let id): "Sub-session id \(id) is not 0; this rig runs no provisioned sub-sessions."
        case .configuration(let error): error.description
        }
    }
}
