/// A FiRa UCI message group.
///
/// A struct rather than an enum because vendor groups (0x9-0xC, 0xE, 0xF) are open-ended.
package struct GroupID: RawRepresentable, Hashable, Sendable {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let core = GroupID(rawValue: 0x0)
    package static let sessionConfig = GroupID(rawValue: 0x1)
    package static let sessionControl = GroupID(rawValue: 0x2)
    package static let dataControl = GroupID(rawValue: 0x3)
    package static let test = GroupID(rawValue: 0xD)
    /// Android's vendor group (AOSP `uci_packets.pdl`, VENDOR_ANDROID), which Qorvo's firmware
    /// and Google's pica also answer.
    package static let vendorAndroid = GroupID(rawValue: 0xC)
}
