/// What follows the two header octets, by message. Ranging Capability Request, Configuration
/// Response, Stop Ranging and Stop Ranging Response carry a technology bitmap and nothing else.
package enum OOBPayload: Equatable, Sendable {
    /// The technologies the initiator asks about.
    case capabilityRequest(RangingTechnologySet)
    case capabilityResponse(CapabilityResponse)
    case configuration(RangingConfiguration)
    /// The technologies the responder configured.
    case configurationResponse(RangingTechnologySet)
    /// The technologies to stop.
    case stopRanging(RangingTechnologySet)
    /// The technologies stopped.
    case stopRangingResponse(RangingTechnologySet)
    case motionNotification(Motion)

    package var id: OOBMessageID {
        switch self {
        case .capabilityRequest: .capabilityRequest
        case .capabilityResponse: .capabilityResponse
        case .configuration: .configuration
        case .configurationResponse: .configurationResponse
        case .stopRanging: .stopRanging
        case .stopRangingResponse: .stopRangingResponse
        case .motionNotification: .motionNotification
        }
    }
}
