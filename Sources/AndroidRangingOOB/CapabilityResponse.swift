/// The body of a Ranging Capability Response (0x1): the supported technologies, one capability
/// block for each (in any order, each once), and from version 2 the transitioning octet and the
/// 2-octet device type (the PDL's `CapabilitiesResponseV1`/`V2`). A version 1 UWB-only response
/// is 24 octets: header 2, bitmap 2, UWB block 20.
package struct CapabilityResponse: Equatable, Sendable {
    package var supported: RangingTechnologySet
    package var capabilities: [TechnologyCapability]
    /// Version 2 and later; a version 1 response reads as `.notSupported` and writes nothing.
    package var transitioning: TechnologyTransitioning
    /// Version 2 and later (the PDL's `DeviceType`: 0 unknown, 1 phone, 2 tablet, 3 tag,
    /// 4 wearable, 5 hearable). Informational, so kept as sent; a version 1 response reads as 0.
    package var deviceType: UInt16

    /// What a rig says it is in version 2 and later: a tag. The initializer's default is 0,
    /// unknown, which is also what a version 1 response reads as, so that the two compare equal.
    package static let deviceTypeTag: UInt16 = 0x3

    /// A response whose bitmap is exactly its blocks' technologies.
    package init(capabilities: [TechnologyCapability], transitioning: TechnologyTransitioning = .notSupported, deviceType: UInt16 = 0) {
        supported = RangingTechnologySet(capabilities.map(\.technology))
        self.capabilities = capabilities
        self.transitioning = transitioning
        self.deviceType = deviceType
    }

    /// The UWB block, if any.
    package var uwb: UWBCapability? {
        capabilities.lazy.compactMap { if case .uwb(let capability) = $0 { capability } else { nil } }.first
    }

    /// The octets after version 2's blocks: transitioning (1) and device type (2).
    static func trailingSize(_ version: OOBVersion) -> Int { version >= .v2 ? 3 : 0 }
}
