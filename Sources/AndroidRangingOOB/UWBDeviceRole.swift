/// The UWB role a configuration gives the responder (the PDL's `UwbDeviceRole`, one octet): the
/// FiRa ranging role, which is independent of who controls the session (`UWBDeviceMode`).
package enum UWBDeviceRole: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case initiator = 0x1
    case responder = 0x2

    /// Its bit in a capability's roles bitmap (`UWBRoles`).
    package var bit: UWBRoles { UWBRoles(rawValue: 1 << (rawValue - 1)) }

    package var description: String { self == .initiator ? "initiator" : "responder" }
}
