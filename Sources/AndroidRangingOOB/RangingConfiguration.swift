/// The body of a Ranging Configuration (0x2): the technologies to configure, those of them to
/// start now, one configuration block for each configured technology, and from version 3 the
/// motion-support octet (the PDL's `ConfigurationRequestV1`/`V3`).
package struct RangingConfiguration: Equatable, Sendable {
    package var toConfigure: RangingTechnologySet
    package var toStart: RangingTechnologySet
    package var configurations: [TechnologyConfiguration]
    /// Version 3 and later: the initiator asks to be told of the responder's motion (the PDL's
    /// `MotionIndicator`). A version 1 or 2 configuration reads as false and writes nothing.
    package var motionSupported: Bool

    /// A configuration whose configure bitmap is exactly its blocks' technologies.
    package init(configurations: [TechnologyConfiguration], toStart: RangingTechnologySet? = nil, motionSupported: Bool = false) {
        toConfigure = RangingTechnologySet(configurations.map(\.technology))
        self.toStart = toStart ?? toConfigure
        self.configurations = configurations
        self.motionSupported = motionSupported
    }

    /// The UWB block, if any.
    package var uwb: UWBConfiguration? {
        configurations.lazy.compactMap { if case .uwb(let configuration) = $0 { configuration } else { nil } }.first
    }

    /// The octets after version 3's blocks: the motion indicator.
    static func trailingSize(_ version: OOBVersion) -> Int { version >= .v3 ? 1 : 0 }
}
