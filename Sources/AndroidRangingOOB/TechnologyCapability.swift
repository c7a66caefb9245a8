/// One block of a Ranging Capability Response. UWB is decoded in full (it is what the rig
/// ranges with); BLE RSSI and Channel Sounding are small fixed layouts and decoded too; the Wi-Fi
/// technologies are carried as their bodies, framing checked, contents not.
///
/// Channel Sounding's body is the security levels bitmap (1) and the Bluetooth address (6), 9
/// with the header: the PDL's `BleCsCapabilities` and AOSP's current `CsOobCapabilities` agree.
/// Issue 31 records an older AOSP source giving it another size; the spec's is kept.
package enum TechnologyCapability: Equatable, Sendable {
    case uwb(UWBCapability)
    case bleChannelSounding(securityLevels: UInt8, address: [UInt8])
    /// The PDL's `BleRssiCapabilities`: the Bluetooth address (6).
    case bleRSSI(address: [UInt8])
    /// Wi-Fi NAN RTT or Wi-Fi PD, undecoded.
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
        case .uwb:
            try TechnologyBlocks.exact(body, UWBCapability.bodySize, technology)
            self = .uwb(try UWBCapability(body: body))
        case .bleChannelSounding:
            try TechnologyBlocks.exact(body, 7, technology)
            self = .bleChannelSounding(securityLevels: body[0], address: Array(body[1...]))
        case .bleRSSI:
            try TechnologyBlocks.exact(body, 6, technology)
            self = .bleRSSI(address: body)
        case .wifiNANRTT, .wifiPD:
            self = .opaque(technology, body: body)
        }
    }

    var encoded: [UInt8] {
        switch self {
        case .uwb(let capability): TechnologyBlocks.encode(.uwb, capability.body)
        case .bleChannelSounding(let levels, let address): TechnologyBlocks.encode(.bleChannelSounding, [levels] + address)
        case .bleRSSI(let address): TechnologyBlocks.encode(.bleRSSI, address)
        case .opaque(let technology, let body): TechnologyBlocks.encode(technology, body)
        }
    }
}
