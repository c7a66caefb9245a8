import UCI

/// What the rig's board offers a phone, as far as the accessory protocol is concerned: the
/// channels and preamble codes a shareable configuration may pick, and whether it may hop. Both
/// the accessory configuration data (what the rig asks for) and the validation of the phone's
/// answer (what the rig accepts) are built from it, so the two cannot disagree.
package struct AccessoryCapabilities: Equatable, Sendable {
    /// UWB channels the board can range on.
    package var channels: [UInt8]
    /// Preamble code indices the board can range with.
    package var preambleCodes: [UInt8]
    /// Whether the board can do FiRa round hopping (HOPPING_MODE 1).
    package var hopping: Bool

    package init(channels: [UInt8], preambleCodes: [UInt8] = Self.bprfPreambleCodes, hopping: Bool = false) {
        self.channels = channels
        self.preambleCodes = preambleCodes
        self.hopping = hopping
    }

    /// The BPRF preamble codes (9 to 12) every FiRa board supports. The session this package maps
    /// sets no PRF_MODE, so it is BPRF, and the HPRF codes (25 to 32) are never offered.
    package static let bprfPreambleCodes: [UInt8] = [9, 10, 11, 12]

    /// Channel 9 alone, for a board that does not report its channels: it is the channel the
    /// FiRa PHY makes mandatory.
    package static let fallbackChannels: [UInt8] = [9]

    /// Read from a board's CORE_GET_CAPS_INFO answer (UCI major version `uciMajor`): its
    /// SUPPORTED_CHANNELS bitmap and its SUPPORTED_HOPPING_MODE octet (hopping only when it says
    /// 1; a board that does not report it does not hop).
    package init(capabilities: [CapabilityTLV], uciMajor: UInt8) {
        let bitmap = Capabilities.value(of: .channels, in: capabilities, uciMajor: uciMajor)?.first ?? 0
        let channels = Capabilities.channelBits.enumerated().filter { bitmap & (1 << $0.offset) != 0 }.map(\.element)
        self.init(
            channels: channels.isEmpty ? Self.fallbackChannels : channels,
            hopping: Capabilities.value(of: .hoppingMode, in: capabilities, uciMajor: uciMajor) == [1])
    }
}
