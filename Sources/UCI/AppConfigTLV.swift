
/// One SET/GET_APP_CONFIG TLV: id(1), length(1), value (little-endian).
///
/// The typed constructors encode each value with the size the FiRa table gives it,
/// so callers cannot send a 2-octet RANGING_DURATION by accident. Values longer than
/// 255 octets cannot be encoded.
package struct AppConfigTLV: Hashable, Sendable {
    package var id: AppConfigID
    package var value: [UInt8]

    package init(id: AppConfigID, value: [UInt8]) {
        self.id = id
        self.value = value
    }

    package static func deviceType(_ t: DeviceType) -> AppConfigTLV { .init(id: .deviceType, value: [t.rawValue]) }
    package static func deviceRole(_ r: DeviceRole) -> AppConfigTLV { .init(id: .deviceRole, value: [r.rawValue]) }
    package static func rangingRoundUsage(_ u: RangingRoundUsage) -> AppConfigTLV {
        .init(id: .rangingRoundUsage, value: [u.rawValue])
    }
    package static func stsConfig(_ c: STSConfig) -> AppConfigTLV { .init(id: .stsConfig, value: [c.rawValue]) }
    package static func multiNodeMode(_ m: MultiNodeMode) -> AppConfigTLV {
        .init(id: .multiNodeMode, value: [m.rawValue])
    }
    package static func channel(_ n: UInt8) -> AppConfigTLV { .init(id: .channelNumber, value: [n]) }
    package static func numberOfControlees(_ n: UInt8) -> AppConfigTLV { .init(id: .numberOfControlees, value: [n]) }
    /// 2 octets for a short address, 8 for an extended one (must agree with MAC_ADDRESS_MODE).
    package static func deviceMacAddress(_ a: MacAddress) -> AppConfigTLV {
        .init(id: .deviceMacAddress, value: a.octets)
    }
    /// The peers' addresses back to back (all of one kind, matching MAC_ADDRESS_MODE).
    package static func dstMacAddresses(_ a: [MacAddress]) -> AppConfigTLV {
        .init(id: .dstMacAddress, value: a.flatMap(\.octets))
    }
    package static func slotDuration(rstu: UInt16) -> AppConfigTLV { .init(id: .slotDuration, value: rstu.littleEndianBytes) }
    package static func rangingDuration(milliseconds: UInt32) -> AppConfigTLV {
        .init(id: .rangingDuration, value: milliseconds.littleEndianBytes)
    }
    package static func rangingRoundControl(_ bits: UInt8) -> AppConfigTLV { .init(id: .rangingRoundControl, value: [bits]) }
    package static func aoaResultRequest(_ v: UInt8) -> AppConfigTLV { .init(id: .aoaResultRequest, value: [v]) }
    package static func rssiReporting(_ v: UInt8) -> AppConfigTLV { .init(id: .rssiReporting, value: [v]) }
    package static func rangeDataNotificationConfig(_ v: UInt8) -> AppConfigTLV {
        .init(id: .rangeDataNotificationConfig, value: [v])
    }
    package static func rframeConfig(_ v: UInt8) -> AppConfigTLV { .init(id: .rframeConfig, value: [v]) }
    package static func preambleCodeIndex(_ v: UInt8) -> AppConfigTLV { .init(id: .preambleCodeIndex, value: [v]) }
    package static func sfdID(_ v: UInt8) -> AppConfigTLV { .init(id: .sfdID, value: [v]) }
    package static func slotsPerRangingRound(_ v: UInt8) -> AppConfigTLV { .init(id: .slotsPerRangingRound, value: [v]) }
    package static func macAddressMode(_ m: MacAddressMode) -> AppConfigTLV { .init(id: .macAddressMode, value: [m.rawValue]) }
    package static func sessionKey(_ key: [UInt8]) -> AppConfigTLV { .init(id: .sessionKey, value: key) }
    package static func vendorID(_ v: UInt16) -> AppConfigTLV { .init(id: .vendorID, value: v.littleEndianBytes) }
    /// The 6-octet static STS IV, in wire order.
    package static func staticSTSIV(_ iv: [UInt8]) -> AppConfigTLV {
        precondition(iv.count == 6, "STATIC_STS_IV is 6 octets")
        return .init(id: .staticSTSIV, value: iv)
    }
    package static func hoppingMode(_ v: UInt8) -> AppConfigTLV { .init(id: .hoppingMode, value: [v]) }
    package static func resultReportConfig(_ v: UInt8) -> AppConfigTLV { .init(id: .resultReportConfig, value: [v]) }
    /// 4 octets, the UCI 1.x relative time in ms (Qorvo's UCI 2.0 tooling sends 8 octets).
    package static func uwbInitiationTime(milliseconds: UInt32) -> AppConfigTLV {
        .init(id: .uwbInitiationTime, value: milliseconds.littleEndianBytes)
    }
    package static func scheduleMode(_ v: UInt8) -> AppConfigTLV { .init(id: .scheduleMode, value: [v]) }

    /// The value as a 1-octet integer; nil if it has another size.
    package var uint8: UInt8? { value.count == 1 ? value[0] : nil }
    /// The value as a 2-octet little-endian integer; nil if it has another size.
    package var uint16: UInt16? { value.count == 2 ? UInt16(value[0]) | UInt16(value[1]) << 8 : nil }
    /// The value as a 4-octet little-endian integer; nil if it has another size.
    package var uint32: UInt32? {
        value.count == 4 ? value.reversed().reduce(0) { $0 << 8 | UInt32($1) } : nil
    }

    /// The value split into addresses of the size `mode` implies; nil if it does not divide evenly.
    package func macAddresses(mode: MacAddressMode) -> [MacAddress]? {
        let size = mode.addressSize
        guard value.count % size == 0 else { return nil }
        return stride(from: 0, to: value.count, by: size).map { start in
            let octets = Array(value[start..<start + size])
            return size == 2 ? MacAddress(shortOctets: octets) : MacAddress(extendedOctets: octets)
        }
    }
}

extension [AppConfigTLV] {
    /// count(1) then id, length, value for each TLV.
    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.append(count: count, of: "app config TLV list")
        for tlv in self {
            bytes.append(tlv.id.rawValue)
            bytes.append(count: tlv.value.count, of: "app config \(tlv.id) value")
            bytes.append(contentsOf: tlv.value)
        }
        return bytes
    }

    /// Reads count(1) TLVs; running out of bytes mid-list is `.truncated`.
    init(from reader: inout ByteReader) throws(UCIError) {
        let count = try reader.u8("app config count")
        self = []
        for _ in 0..<count {
            let id = AppConfigID(rawValue: try reader.u8("app config id"))
            let length = try reader.u8("app config length")
            append(AppConfigTLV(id: id, value: try reader.bytes(Int(length), "app config value")))
        }
    }
}
