/// The roles octet of a UWB capability: bit 0 initiator, bit 1 responder (role value − 1, as
/// AOSP's `UwbOobCapabilities` packs `UwbDeviceRole`; the PDL gives the field only as 8 bits).
/// The other six bits are refused when parsed.
package struct UWBRoles: OptionSet, Hashable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let initiator = UWBDeviceRole.initiator.bit
    package static let responder = UWBDeviceRole.responder.bit
    package static let assigned: UWBRoles = [.initiator, .responder]
}
