/// One block of a Ranging Configuration. UWB is decoded in full; BLE RSSI (the peer's address,
/// 6) and Channel Sounding (security level 1, address 6) are decoded; the Wi-Fi technologies are
/// carried as their bodies (the PDL's `WifiNanRttConfiguration` and `WifiPdConfiguration`).
package enum TechnologyConfiguration: Equatable, Sendable {
    case uwb(UWBConfiguration)
    case bleChannelSounding(securityLevel: UInt8, address: [UInt8])
    case bleRSSI(address: [UInt8])
    case opaque(RangingTechnology, body: [UInt8])

    package var technology: RangingTechnology {
        switch self {
        case .uwb: .uwb
        case .bleChannelSounding: .bleChannelSounding
        case .bleRSSI: .bleRSSI
        case .opaque(let technology, _): technology
        }
    }

    init(_ technology: RangingTechnology, body: [UInt8]) throws(OOBMessageError) {
        switch technology {
        case .uwb: self = .uwb(try UWBConfiguration(body: body))
        case .bleChannelSounding:
            try TechnologyBlocks.exact(body, 7, technology)
            self = .bleChannelSounding(securityLevel: body[0], address: Array(body[1...]))
        case .bleRSSI:
            try TechnologyBlocks.exact(body, 6, technology)
            self = .bleRSSI(address: body)
        case .wifiNANRTT, .wifiPD: self = .opaque(technology, body: body)
        }
    }

    var encoded: [UInt8] {
        switch self {
        case .uwb(let configuration): TechnologyBlocks.encode(.uwb, configuration.body)
        case .bleChannelSounding(let level, let address): TechnologyBlocks.encode(.bleChannelSounding, [level] + address)
        case .bleRSSI(let address): TechnologyBlocks.encode(.bleRSSI, address)
        case .opaque(let technology, let body): TechnologyBlocks.encode(technology, body)
        }
    }
}
