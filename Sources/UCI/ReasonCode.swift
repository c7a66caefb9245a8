/// Why a session changed state (SESSION_STATUS_NTF; uci.md §1.4, AOSP pdl `ReasonCode`).
///
/// Open-ended: vendors use 0x80-0xFE freely.
package struct ReasonCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let stateChangeWithSessionManagementCommands = ReasonCode(rawValue: 0x00)
    package static let maxRangingRoundRetryCountReached = ReasonCode(rawValue: 0x01)
    package static let maxNumberOfMeasurementsReached = ReasonCode(rawValue: 0x02)
    package static let sessionSuspendedDueToInbandSignal = ReasonCode(rawValue: 0x03)
    package static let sessionResumedDueToInbandSignal = ReasonCode(rawValue: 0x04)
    package static let sessionStoppedDueToInbandSignal = ReasonCode(rawValue: 0x05)
    // Configuration errors
    package static let slotLengthNotSupported = ReasonCode(rawValue: 0x20)
    package static let insufficientSlotsPerRR = ReasonCode(rawValue: 0x21)
    package static let macAddressModeNotSupported = ReasonCode(rawValue: 0x22)
    package static let invalidRangingDuration = ReasonCode(rawValue: 0x23)
    package static let invalidSTSConfig = ReasonCode(rawValue: 0x24)
    package static let invalidRframeConfig = ReasonCode(rawValue: 0x25)
    package static let husNotEnoughSlots = ReasonCode(rawValue: 0x26)
    package static let husCFPPhaseTooShort = ReasonCode(rawValue: 0x27)
    package static let husCAPPhaseTooShort = ReasonCode(rawValue: 0x28)
    package static let husOthers = ReasonCode(rawValue: 0x29)
    package static let sessionKeyNotFound = ReasonCode(rawValue: 0x2A)
    package static let subSessionKeyNotFound = ReasonCode(rawValue: 0x2B)
    package static let invalidPreambleCodeIndex = ReasonCode(rawValue: 0x2C)
    package static let invalidSFDID = ReasonCode(rawValue: 0x2D)
    package static let invalidPSDUDataRate = ReasonCode(rawValue: 0x2E)
    package static let invalidPHRDataRate = ReasonCode(rawValue: 0x2F)
    package static let invalidPreambleDuration = ReasonCode(rawValue: 0x30)
    package static let invalidSTSLength = ReasonCode(rawValue: 0x31)
    package static let invalidNumberOfSTSSegments = ReasonCode(rawValue: 0x32)
    package static let invalidNumberOfControlees = ReasonCode(rawValue: 0x33)
    package static let maxRangingReplyTimeExceeded = ReasonCode(rawValue: 0x34)
    package static let invalidDestinationAddressList = ReasonCode(rawValue: 0x35)
    package static let invalidOrNotFoundSubSessionID = ReasonCode(rawValue: 0x36)
    package static let invalidResultReportConfig = ReasonCode(rawValue: 0x37)
    package static let invalidRangingRoundControlConfig = ReasonCode(rawValue: 0x38)
    package static let invalidRangingRoundUsage = ReasonCode(rawValue: 0x39)
    package static let invalidMultiNodeMode = ReasonCode(rawValue: 0x3A)
    // Vendor range, but defined by AOSP
    package static let invalidChannelWithAoA = ReasonCode(rawValue: 0x80)
    package static let stoppedDueToOtherSessionConflict = ReasonCode(rawValue: 0x81)
    package static let sessionStoppedDueToMaxSTSIndexValue = ReasonCode(rawValue: 0xA2)

    /// The AOSP pdl name, e.g. "ERROR_INVALID_RANGING_DURATION", or "0x9C" when unknown.
    package var description: String {
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
