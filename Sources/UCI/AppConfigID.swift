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
