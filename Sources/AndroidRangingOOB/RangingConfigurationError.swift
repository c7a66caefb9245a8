/// Why a phone's UWB configuration, well formed as it may be, cannot become a session on this
/// rig's board. One case per field; each description is one sentence naming the value and what
/// the board has instead, for the log line a refusal gets.
package enum RangingConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The Ranging Configuration has no UWB block.
    case noUWBConfiguration
    /// Session id 0, which UCI keeps for the RF test session.
    case reservedSessionID
    case unsupportedConfigID(UInt8, supported: [UInt8])
    case unsupportedChannel(UInt8, supported: [UInt8])
    case unsupportedPreambleIndex(UInt8, supported: [UInt8])
    case intervalBelowMinimum(UInt16, minimum: UInt16)
    /// An interval that is not one of Android's presets for the config id.
    case intervalNotAPreset(UInt16, configID: UInt8, presets: [UInt16])
    case slotBelowMinimum(UInt8, minimum: UInt8)
    /// A slot duration that is not one of Android's (1 or 2 ms).
    case unsupportedSlotDuration(UInt8, supported: [UInt8])
    case sessionKeyLength(Int, supported: [Int])
    case unsupportedRole(UWBDeviceRole)

    package var description: String {
        switch self {
        case .noUWBConfiguration: "The ranging configuration carries no UWB block."
        case .reservedSessionID: "Session id 0 is reserved for UCI's RF test session."
        case let .unsupportedConfigID(id, supported): "Config id \(id) is not one the board runs (\(Self.list(supported)))."
        case let .unsupportedChannel(channel, supported): "Channel \(channel) is not one the board ranges on (\(Self.list(supported)))."
        case let .unsupportedPreambleIndex(index, supported):
            "Preamble index \(index) is not one the board ranges with (\(Self.list(supported)))."
        case let .intervalBelowMinimum(interval, minimum): "A ranging interval of \(interval) ms is below the board's minimum of \(minimum) ms."
        case let .intervalNotAPreset(interval, configID, presets):
            "A ranging interval of \(interval) ms is not one of Android's presets for config id \(configID) (\(Self.list(presets)) ms)."
        case let .slotBelowMinimum(slot, minimum): "A slot duration of \(slot) ms is below the board's minimum of \(minimum) ms."
        case let .unsupportedSlotDuration(slot, supported):
            "A slot duration of \(slot) ms is not one Android ranges with (\(Self.list(supported)) ms)."
        case let .sessionKeyLength(length, supported):
            "A session key of \(length) octets is not a length the board can use (\(Self.list(supported)))."
        case .unsupportedRole(let role): "The board cannot take the UWB \(role) role."
        }
    }

    private static func list(_ values: [some BinaryInteger]) -> String { values.map { "\($0)" }.joined(separator: ", ") }
}
