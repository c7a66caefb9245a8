/// The technology id that opens each capability or configuration block (the PDL's `Technology`).
/// Id 0x4 is unassigned; Wi-Fi PD (0x5) arrived with version 3.
package enum RangingTechnology: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case uwb = 0x0
    case bleChannelSounding = 0x1
    case wifiNANRTT = 0x2
    case bleRSSI = 0x3
    case wifiPD = 0x5

    /// Its bit in a `RangingTechnologySet`: the bit numbers equal the ids.
    package var bit: RangingTechnologySet { RangingTechnologySet(rawValue: 1 << UInt16(rawValue)) }

    package var description: String {
        switch self {
        case .uwb: "UWB"
        case .bleChannelSounding: "BLE Channel Sounding"
        case .wifiNANRTT: "Wi-Fi NAN RTT"
        case .bleRSSI: "BLE RSSI"
        case .wifiPD: "Wi-Fi PD"
        }
    }
}
