import ByteCoding

extension ShareableConfigurationError: TruncationError {
    package static func truncated(context: String, field: String, needed: Int, available: Int) -> Self {
        .truncated(field: field, needed: needed, available: available)
    }
}

/// Why a phone's shareable configuration data cannot become a session on this rig's board. One
/// case per field and reason; each description is one sentence naming the field and its value,
/// fit for the one log line a malformed blob gets.
package enum ShareableConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer octets than the header or the declared length need.
    case truncated(field: String, needed: Int, available: Int)
    /// More octets than the declared length.
    case trailingOctets(Int)
    case unsupportedVersion(major: UInt16, minor: UInt16)
    /// The length octet is not the one the version's layout has.
    case lengthMismatch(version: UWBConfigurationVersion, declared: UInt8)
    case countryCode([UInt8])
    /// Session id 0, which UCI keeps for the RF test session.
    case reservedSessionID
    case unsupportedPreambleCode(UInt8, supported: [UInt8])
    case unsupportedChannel(UInt8, supported: [UInt8])
    case slotsPerRound(UInt16)
    case slotDuration(UInt16)
    case zeroRangingInterval
    case roundLongerThanInterval(roundMilliseconds: Int, intervalMilliseconds: UInt16)
    case roundControl(UInt8)
    /// A hopping octet that is neither 0 nor 1.
    case hoppingMode(UInt8)
    /// Hopping asked of a board that cannot hop.
    case hoppingUnsupported

    package var description: String {
        switch self {
        case let .truncated(field, needed, available):
            "The shareable configuration data is truncated: its \(field) needs \(needed) octets and has \(available)."
        case .trailingOctets(let count):
            "The shareable configuration data has \(count) octets more than its length octet declares."
        case let .unsupportedVersion(major, minor):
            "Shareable configuration version \(major).\(minor) is not supported (1.1 and 2.0 are)."
        case let .lengthMismatch(version, declared):
            "The length octet is \(declared), but version \(version) shareable configuration data has \(version.shareableLength)."
        case .countryCode(let octets):
            "Country code 0x\(octets.hexString) is not two ASCII letters."
        case .reservedSessionID: "Session id 0 is reserved for UCI's RF test session."
        case let .unsupportedPreambleCode(code, supported):
            "Preamble code \(code) is not one the board supports (\(supported.map(String.init).joined(separator: ", ")))."
        case let .unsupportedChannel(channel, supported):
            "Channel \(channel) is not one the board supports (\(supported.map(String.init).joined(separator: ", ")))."
        case .slotsPerRound(let slots):
            "Slots per round \(slots) is outside 6 to 255, the range a DS-TWR round and UCI's one-octet SLOTS_PER_RR allow."
        case .slotDuration(let rstu): "Slot duration \(rstu) RSTU is not a multiple of 1200 RSTU of at least 2400."
        case .zeroRangingInterval: "Ranging interval 0 ms is not positive."
        case let .roundLongerThanInterval(round, interval):
            "Ranging interval \(interval) ms is shorter than its round of \(round) ms (slots per round times slot duration)."
        case .roundControl(let value):
            "Ranging round control 0x\([value].hexString) is not time-scheduled ranging with a control message (0x02 or 0x03)."
        case .hoppingMode(let value): "Hopping mode \(value) is neither 0 (off) nor 1 (on)."
        case .hoppingUnsupported: "Hopping mode 1 asks for round hopping, which the board does not support."
        }
    }
}
