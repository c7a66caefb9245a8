/// The second octet of every message (the spec's message table; the PDL's `MessageId`). Ids 0x4
/// and 0x5 are unassigned: older AOSP sources (`MessageType`, 2024) numbered START_RANGING 3 and
/// STOP_RANGING 4 and put the id first; the published spec has neither, and this codec follows it.
package enum OOBMessageID: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    /// Initiator → responder: which technologies it would like to range with.
    case capabilityRequest = 0x0
    /// Responder → initiator: what it supports, one capability block per technology.
    case capabilityResponse = 0x1
    /// Initiator → responder: the chosen configuration, one block per technology.
    case configuration = 0x2
    /// Responder → initiator (optional): which technologies it configured.
    case configurationResponse = 0x3
    /// Either side: stop these technologies.
    case stopRanging = 0x6
    /// The answer to Stop Ranging (optional).
    case stopRangingResponse = 0x7
    /// Version 3 only: the responder's motion changed.
    case motionNotification = 0x8

    /// The first version whose layout has this message.
    package var introduced: OOBVersion { self == .motionNotification ? .v3 : .v1 }

    package var description: String {
        let name =
            switch self {
            case .capabilityRequest: "Ranging Capability Request"
            case .capabilityResponse: "Ranging Capability Response"
            case .configuration: "Ranging Configuration"
            case .configurationResponse: "Ranging Configuration Response"
            case .stopRanging: "Stop Ranging"
            case .stopRangingResponse: "Stop Ranging Response"
            case .motionNotification: "Motion Notification"
            }
        return "\(name) (0x\(String(rawValue, radix: 16, uppercase: true)))"
    }
}
