/// A UCI status code (FiRa UCI §8.5; uci.md §1.6).
///
/// Open-ended: a newer or vendor UWBS may send codes we do not know, and they must
/// survive decoding so they can be logged.
public struct StatusCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    // Generic
    public static let ok = StatusCode(rawValue: 0x00)
    public static let rejected = StatusCode(rawValue: 0x01)
    public static let failed = StatusCode(rawValue: 0x02)
    public static let syntaxError = StatusCode(rawValue: 0x03)
    public static let invalidParam = StatusCode(rawValue: 0x04)
    public static let invalidRange = StatusCode(rawValue: 0x05)
    public static let invalidMessageSize = StatusCode(rawValue: 0x06)
    public static let unknownGID = StatusCode(rawValue: 0x07)
    public static let unknownOID = StatusCode(rawValue: 0x08)
    public static let readOnly = StatusCode(rawValue: 0x09)
    public static let commandRetry = StatusCode(rawValue: 0x0A)
    public static let unknown = StatusCode(rawValue: 0x0B)
    public static let notApplicable = StatusCode(rawValue: 0x0C)
    // Session
    public static let sessionNotExist = StatusCode(rawValue: 0x11)
    public static let sessionDuplicate = StatusCode(rawValue: 0x12)
    public static let sessionActive = StatusCode(rawValue: 0x13)
    public static let maxSessionsExceeded = StatusCode(rawValue: 0x14)
    public static let sessionNotConfigured = StatusCode(rawValue: 0x15)
    public static let activeSessionsOngoing = StatusCode(rawValue: 0x16)
    public static let multicastListFull = StatusCode(rawValue: 0x17)
    public static let addressNotFound = StatusCode(rawValue: 0x18)
    public static let addressAlreadyPresent = StatusCode(rawValue: 0x19)
    public static let initiationTimeTooOld = StatusCode(rawValue: 0x1A)
    public static let okNegativeDistanceReport = StatusCode(rawValue: 0x1B)
    // Ranging
    public static let rangingTxFailed = StatusCode(rawValue: 0x20)
    public static let rangingRxTimeout = StatusCode(rawValue: 0x21)
    public static let rangingRxPhyDecFailed = StatusCode(rawValue: 0x22)
    public static let rangingRxPhyToaFailed = StatusCode(rawValue: 0x23)
    public static let rangingRxPhyStsFailed = StatusCode(rawValue: 0x24)
    public static let rangingRxMacDecFailed = StatusCode(rawValue: 0x25)
    public static let rangingRxMacIeDecFailed = StatusCode(rawValue: 0x26)
    public static let rangingRxMacIeMissing = StatusCode(rawValue: 0x27)
    // Data
    public static let dataMaxTxPsduSizeExceeded = StatusCode(rawValue: 0x30)
    public static let dataRxCrcError = StatusCode(rawValue: 0x31)

    /// The spec name, e.g. "RX_TIMEOUT", or "0x5A" for a code we do not know.
    public var description: String {
        switch rawValue {
        case 0x00: "OK"
        case 0x01: "REJECTED"
        case 0x02: "FAILED"
        case 0x03: "SYNTAX_ERROR"
        case 0x04: "INVALID_PARAM"
        case 0x05: "INVALID_RANGE"
        case 0x06: "INVALID_MSG_SIZE"
        case 0x07: "UNKNOWN_GID"
        case 0x08: "UNKNOWN_OID"
        case 0x09: "READ_ONLY"
        case 0x0A: "COMMAND_RETRY"
        case 0x0B: "UNKNOWN"
        case 0x0C: "NOT_APPLICABLE"
        case 0x11: "SESSION_NOT_EXIST"
        case 0x12: "SESSION_DUPLICATE"
        case 0x13: "SESSION_ACTIVE"
        case 0x14: "MAX_SESSIONS_EXCEEDED"
        case 0x15: "SESSION_NOT_CONFIGURED"
        case 0x16: "ACTIVE_SESSIONS_ONGOING"
        case 0x17: "MULTICAST_LIST_FULL"
        case 0x18: "ADDRESS_NOT_FOUND"
        case 0x19: "ADDRESS_ALREADY_PRESENT"
        case 0x1A: "INITIATION_TIME_TOO_OLD"
        case 0x1B: "OK_NEGATIVE_DISTANCE_REPORT"
        case 0x20: "TX_FAILED"
        case 0x21: "RX_TIMEOUT"
        case 0x22: "RX_PHY_DEC_FAILED"
        case 0x23: "RX_PHY_TOA_FAILED"
        case 0x24: "RX_PHY_STS_FAILED"
        case 0x25: "RX_MAC_DEC_FAILED"
        case 0x26: "RX_MAC_IE_DEC_FAILED"
        case 0x27: "RX_MAC_IE_MISSING"
        case 0x30: "DATA_MAX_TX_PSDU_SIZE_EXCEEDED"
        case 0x31: "DATA_RX_CRC_ERROR"
        default: hex(rawValue)
        }
    }
}

/// Why a session changed state (SESSION_STATUS_NTF; uci.md §1.4, AOSP pdl `ReasonCode`).
///
/// Open-ended: vendors use 0x80-0xFE freely.
public struct ReasonCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let stateChangeWithSessionManagementCommands = ReasonCode(rawValue: 0x00)
    public static let maxRangingRoundRetryCountReached = ReasonCode(rawValue: 0x01)
    public static let maxNumberOfMeasurementsReached = ReasonCode(rawValue: 0x02)
    public static let sessionSuspendedDueToInbandSignal = ReasonCode(rawValue: 0x03)
    public static let sessionResumedDueToInbandSignal = ReasonCode(rawValue: 0x04)
    public static let sessionStoppedDueToInbandSignal = ReasonCode(rawValue: 0x05)
    // Configuration errors
    public static let slotLengthNotSupported = ReasonCode(rawValue: 0x20)
    public static let insufficientSlotsPerRR = ReasonCode(rawValue: 0x21)
    public static let macAddressModeNotSupported = ReasonCode(rawValue: 0x22)
    public static let invalidRangingDuration = ReasonCode(rawValue: 0x23)
    public static let invalidSTSConfig = ReasonCode(rawValue: 0x24)
    public static let invalidRframeConfig = ReasonCode(rawValue: 0x25)
    public static let husNotEnoughSlots = ReasonCode(rawValue: 0x26)
    public static let husCFPPhaseTooShort = ReasonCode(rawValue: 0x27)
    public static let husCAPPhaseTooShort = ReasonCode(rawValue: 0x28)
    public static let husOthers = ReasonCode(rawValue: 0x29)
    public static let sessionKeyNotFound = ReasonCode(rawValue: 0x2A)
    public static let subSessionKeyNotFound = ReasonCode(rawValue: 0x2B)
    public static let invalidPreambleCodeIndex = ReasonCode(rawValue: 0x2C)
    public static let invalidSFDID = ReasonCode(rawValue: 0x2D)
    public static let invalidPSDUDataRate = ReasonCode(rawValue: 0x2E)
    public static let invalidPHRDataRate = ReasonCode(rawValue: 0x2F)
    public static let invalidPreambleDuration = ReasonCode(rawValue: 0x30)
    public static let invalidSTSLength = ReasonCode(rawValue: 0x31)
    public static let invalidNumberOfSTSSegments = ReasonCode(rawValue: 0x32)
    public static let invalidNumberOfControlees = ReasonCode(rawValue: 0x33)
    public static let maxRangingReplyTimeExceeded = ReasonCode(rawValue: 0x34)
    public static let invalidDestinationAddressList = ReasonCode(rawValue: 0x35)
    public static let invalidOrNotFoundSubSessionID = ReasonCode(rawValue: 0x36)
    public static let invalidResultReportConfig = ReasonCode(rawValue: 0x37)
    public static let invalidRangingRoundControlConfig = ReasonCode(rawValue: 0x38)
    public static let invalidRangingRoundUsage = ReasonCode(rawValue: 0x39)
    public static let invalidMultiNodeMode = ReasonCode(rawValue: 0x3A)
    // Vendor range, but defined by AOSP
    public static let invalidChannelWithAoA = ReasonCode(rawValue: 0x80)
    public static let stoppedDueToOtherSessionConflict = ReasonCode(rawValue: 0x81)
    public static let sessionStoppedDueToMaxSTSIndexValue = ReasonCode(rawValue: 0xA2)

    /// The AOSP pdl name, e.g. "ERROR_INVALID_RANGING_DURATION", or "0x9C" when unknown.
    public var description: String {
        switch rawValue {
        case 0x00: "STATE_CHANGE_WITH_SESSION_MANAGEMENT_COMMANDS"
        case 0x01: "MAX_RANGING_ROUND_RETRY_COUNT_REACHED"
        case 0x02: "MAX_NUMBER_OF_MEASUREMENTS_REACHED"
        case 0x03: "SESSION_SUSPENDED_DUE_TO_INBAND_SIGNAL"
        case 0x04: "SESSION_RESUMED_DUE_TO_INBAND_SIGNAL"
        case 0x05: "SESSION_STOPPED_DUE_TO_INBAND_SIGNAL"
        case 0x20: "ERROR_SLOT_LENGTH_NOT_SUPPORTED"
        case 0x21: "ERROR_INSUFFICIENT_SLOTS_PER_RR"
        case 0x22: "ERROR_MAC_ADDRESS_MODE_NOT_SUPPORTED"
        case 0x23: "ERROR_INVALID_RANGING_DURATION"
        case 0x24: "ERROR_INVALID_STS_CONFIG"
        case 0x25: "ERROR_INVALID_RFRAME_CONFIG"
        case 0x26: "ERROR_HUS_NOT_ENOUGH_SLOTS"
        case 0x27: "ERROR_HUS_CFP_PHASE_TOO_SHORT"
        case 0x28: "ERROR_HUS_CAP_PHASE_TOO_SHORT"
        case 0x29: "ERROR_HUS_OTHERS"
        case 0x2A: "ERROR_SESSION_KEY_NOT_FOUND"
        case 0x2B: "ERROR_SUB_SESSION_KEY_NOT_FOUND"
        case 0x2C: "ERROR_INVALID_PREAMBLE_CODE_INDEX"
        case 0x2D: "ERROR_INVALID_SFD_ID"
        case 0x2E: "ERROR_INVALID_PSDU_DATA_RATE"
        case 0x2F: "ERROR_INVALID_PHR_DATA_RATE"
        case 0x30: "ERROR_INVALID_PREAMBLE_DURATION"
        case 0x31: "ERROR_INVALID_STS_LENGTH"
        case 0x32: "ERROR_INVALID_NUM_OF_STS_SEGMENTS"
        case 0x33: "ERROR_INVALID_NUM_OF_CONTROLEES"
        case 0x34: "ERROR_MAX_RANGING_REPLY_TIME_EXCEEDED"
        case 0x35: "ERROR_INVALID_DST_ADDRESS_LIST"
        case 0x36: "ERROR_INVALID_OR_NOT_FOUND_SUB_SESSION_ID"
        case 0x37: "ERROR_INVALID_RESULT_REPORT_CONFIG"
        case 0x38: "ERROR_INVALID_RANGING_ROUND_CONTROL_CONFIG"
        case 0x39: "ERROR_INVALID_RANGING_ROUND_USAGE"
        case 0x3A: "ERROR_INVALID_MULTI_NODE_MODE"
        case 0x80: "ERROR_INVALID_CHANNEL_WITH_AOA"
        case 0x81: "ERROR_STOPPED_DUE_TO_OTHER_SESSION_CONFLICT"
        case 0xA2: "SESSION_STOPPED_DUE_TO_MAX_STS_INDEX_VALUE"
        default: hex(rawValue)
        }
    }
}

/// CORE_DEVICE_STATUS_NTF state. Closed: an unknown value is a protocol error.
public enum DeviceState: UInt8, Sendable {
    case ready = 0x01, active = 0x02, error = 0xFF
}

/// SESSION_STATUS_NTF state. Closed: an unknown value is a protocol error.
public enum SessionState: UInt8, Sendable {
    case initialized = 0, deinitialized = 1, active = 2, idle = 3
}

/// SESSION_INIT session type. Open-ended: 2.0 adds phases and vendors add their own.
public struct SessionType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let fiRaRanging = SessionType(rawValue: 0x00)
    public static let rangingAndInBandData = SessionType(rawValue: 0x01)
    public static let dataTransfer = SessionType(rawValue: 0x02)
    public static let ccc = SessionType(rawValue: 0xA0)
    public static let deviceTest = SessionType(rawValue: 0xD0)
}
