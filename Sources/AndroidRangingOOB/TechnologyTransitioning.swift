/// Version 2's transitioning octet in a Capability Response (the PDL's
/// `TechnologyTransitioning`): whether the responder can move a session from one technology to
/// another without a gap.
package enum TechnologyTransitioning: UInt8, CaseIterable, Sendable {
    case notSupported = 0x0
    case makeBeforeBreak = 0x1
}
