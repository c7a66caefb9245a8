/// The version of the UWB configuration data inside both blobs: the phone's shareable
/// configuration and the accessory's UWB configuration data carry the same major/minor pair, and
/// the version fixes each layout's length (Apple's Nearby Interaction Accessory Protocol
/// Specification; AOSP's `IosAccessoryConfigurationData` spells the same lengths out).
package enum UWBConfigurationVersion: CaseIterable, Sendable, CustomStringConvertible {
    /// Release R3: the fields every iPhone with a U1 chip understands.
    case v1_1
    /// Release R4: adds hopping, and in the accessory's data its wishes for slots per round, slot
    /// duration and ranging interval.
    case v2_0

    package var major: UInt16 { self == .v1_1 ? 1 : 2 }
    package var minor: UInt16 { self == .v1_1 ? 1 : 0 }

    /// The version a major/minor pair names; nil for any other pair (1.0 included: its layout
    /// is not in the sources this codec follows).
    package init?(major: UInt16, minor: UInt16) {
        switch (major, minor) {
        case (1, 1): self = .v1_1
        case (2, 0): self = .v2_0
        default: return nil
        }
    }

    /// The shareable configuration's length octet: what follows its 5-octet header.
    package var shareableLength: Int { self == .v1_1 ? 25 : 30 }

    /// The accessory's UWB configuration data, in octets (its length octet).
    package var accessoryUWBLength: Int { self == .v1_1 ? 21 : 32 }

    package var description: String { "\(major).\(minor)" }
}
