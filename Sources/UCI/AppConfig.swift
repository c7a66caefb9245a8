/// A session app configuration parameter ID (uci.md §1.7; pica and AOSP pdl `AppConfigTlvType`).
///
/// Open-ended: vendor IDs (0xA0-0xDF, 0xE3-0xFF) pass through untouched.
package struct AppConfigID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let deviceType = AppConfigID(rawValue: 0x00)
    package static let rangingRoundUsage = AppConfigID(rawValue: 0x01)
    package static let stsConfig = AppConfigID(rawValue: 0x02)
    package static let multiNodeMode = AppConfigID(rawValue: 0x03)
    package static let channelNumber = AppConfigID(rawValue: 0x04)
    package static let numberOfControlees = AppConfigID(rawValue: 0x05)
    package static let deviceMacAddress = AppConfigID(rawValue: 0x06)
    package static let dstMacAddress = AppConfigID(rawValue: 0x07)
    package static let slotDuration = AppConfigID(rawValue: 0x08)
    package static let rangingDuration = AppConfigID(rawValue: 0x09)
    package static let stsIndex = AppConfigID(rawValue: 0x0A)
    package static let macFcsType = AppConfigID(rawValue: 0x0B)
    package static let rangingRoundControl = AppConfigID(rawValue: 0x0C)
    package static let aoaResultRequest = AppConfigID(rawValue: 0x0D)
    package static let rangeDataNotificationConfig = AppConfigID(rawValue: 0x0E)
    package static let proximityNear = AppConfigID(rawValue: 0x0F)
    package static let proximityFar = AppConfigID(rawValue: 0x10)
    package static let deviceRole = AppConfigID(rawValue: 0x11)
    package static let rframeConfig = AppConfigID(rawValue: 0x12)
    package static let rssiReporting = AppConfigID(rawValue: 0x13)
    package static let preambleCodeIndex = AppConfigID(rawValue: 0x14)
    package static let sfdID = AppConfigID(rawValue: 0x15)
    package static let psduDataRate = AppConfigID(rawValue: 0x16)
    package static let preambleDuration = AppConfigID(rawValue: 0x17)
    package static let rangingTimeStruct = AppConfigID(rawValue: 0x1A)
    package static let slotsPerRangingRound = AppConfigID(rawValue: 0x1B)
    package static let prfMode = AppConfigID(rawValue: 0x1F)
    package static let scheduleMode = AppConfigID(rawValue: 0x22)
    package static let keyRotation = AppConfigID(rawValue: 0x23)
    package static let keyRotationRate = AppConfigID(rawValue: 0x24)
    package static let sessionPriority = AppConfigID(rawValue: 0x25)
    package static let macAddressMode = AppConfigID(rawValue: 0x26)
    package static let vendorID = AppConfigID(rawValue: 0x27)
    package static let staticSTSIV = AppConfigID(rawValue: 0x28)
    package static let numberOfSTSSegments = AppConfigID(rawValue: 0x29)
    package static let maxRangingRoundRetry = AppConfigID(rawValue: 0x2A)
    package static let uwbInitiationTime = AppConfigID(rawValue: 0x2B)
    package static let hoppingMode = AppConfigID(rawValue: 0x2C)
    package static let resultReportConfig = AppConfigID(rawValue: 0x2E)
    package static let subSessionID = AppConfigID(rawValue: 0x30)
    package static let maxNumberOfMeasurements = AppConfigID(rawValue: 0x32)
    package static let stsLength = AppConfigID(rawValue: 0x35)
    package static let sessionKey = AppConfigID(rawValue: 0x45)
    package static let subSessionKey = AppConfigID(rawValue: 0x46)

    /// The spec name, e.g. "SLOT_DURATION", or "0xE8" for an ID we do not know.
    package var description: String {
        switch rawValue {
        case 0x00: "DEVICE_TYPE"
        case 0x01: "RANGING_ROUND_USAGE"
        case 0x02: "STS_CONFIG"
        case 0x03: "MULTI_NODE_MODE"
        case 0x04: "CHANNEL_NUMBER"
        case 0x05: "NO_OF_CONTROLEE"
        case 0x06: "DEVICE_MAC_ADDRESS"
        case 0x07: "DST_MAC_ADDRESS"
        case 0x08: "SLOT_DURATION"
        case 0x09: "RANGING_DURATION"
        case 0x0A: "STS_INDEX"
        case 0x0B: "MAC_FCS_TYPE"
        case 0x0C: "RANGING_ROUND_CONTROL"
        case 0x0D: "AOA_RESULT_REQ"
        case 0x0E: "RANGE_DATA_NTF_CONFIG"
        case 0x0F: "RANGE_DATA_NTF_PROXIMITY_NEAR"
        case 0x10: "RANGE_DATA_NTF_PROXIMITY_FAR"
        case 0x11: "DEVICE_ROLE"
        case 0x12: "RFRAME_CONFIG"
        case 0x13: "RSSI_REPORTING"
        case 0x14: "PREAMBLE_CODE_INDEX"
        case 0x15: "SFD_ID"
        case 0x16: "PSDU_DATA_RATE"
        case 0x17: "PREAMBLE_DURATION"
        case 0x1A: "RANGING_TIME_STRUCT"
        case 0x1B: "SLOTS_PER_RR"
        case 0x1F: "PRF_MODE"
        case 0x22: "SCHEDULE_MODE"
        case 0x23: "KEY_ROTATION"
        case 0x24: "KEY_ROTATION_RATE"
        case 0x25: "SESSION_PRIORITY"
        case 0x26: "MAC_ADDRESS_MODE"
        case 0x27: "VENDOR_ID"
        case 0x28: "STATIC_STS_IV"
        case 0x29: "NUMBER_OF_STS_SEGMENTS"
        case 0x2A: "MAX_RR_RETRY"
        case 0x2B: "UWB_INITIATION_TIME"
        case 0x2C: "HOPPING_MODE"
        case 0x2E: "RESULT_REPORT_CONFIG"
        case 0x30: "SUB_SESSION_ID"
        case 0x32: "MAX_NUMBER_OF_MEASUREMENTS"
        case 0x35: "STS_LENGTH"
        case 0x45: "SESSION_KEY"
        case 0x46: "SUB_SESSION_KEY"
        default: hex(rawValue)
        }
    }
}

/// DEVICE_TYPE values.
package enum DeviceType: UInt8, Sendable { case controlee = 0, controller = 1 }
/// DEVICE_ROLE values (UCI 2.0 adds advertiser/observer/DT roles, not used here).
package enum DeviceRole: UInt8, Sendable { case responder = 0, initiator = 1 }
/// RANGING_ROUND_USAGE values for two-way ranging.
package enum RangingRoundUsage: UInt8, Sendable {
    case ssTwrDeferred = 1, dsTwrDeferred = 2, ssTwrNonDeferred = 3, dsTwrNonDeferred = 4
}
/// STS_CONFIG values.
package enum STSConfig: UInt8, Sendable {
    case staticSTS = 0, dynamic = 1, dynamicWithSubSessionKey = 2, provisioned = 3, provisionedWithSubSessionKey = 4
}
/// MULTI_NODE_MODE values.
package enum MultiNodeMode: UInt8, Sendable { case unicast = 0, oneToMany = 1 }

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

/// One entry of SESSION_SET_APP_CONFIG_RSP: which parameter the UWBS refused and why.
package struct AppConfigStatus: Hashable, Sendable {
    package var id: AppConfigID
    package var status: StatusCode

    package init(id: AppConfigID, status: StatusCode) {
        self.id = id
        self.status = status
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
