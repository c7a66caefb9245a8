/// A UCI status code (FiRa UCI §8.5; uci.md §1.6).
///
/// Open-ended: a newer or vendor UWBS may send codes we do not know, and they must
/// survive decoding so they can be logged.
package struct StatusCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    // Generic
    package static let ok = StatusCode(rawValue: 0x00)
    package static let rejected = StatusCode(rawValue: 0x01)
    package static let failed = StatusCode(rawValue: 0x02)
    package static let syntaxError = StatusCode(rawValue: 0x03)
    package static let invalidParam = StatusCode(rawValue: 0x04)
    package static let invalidRange = StatusCode(rawValue: 0x05)
    package static let invalidMessageSize = StatusCode(rawValue: 0x06)
    package static let unknownGID = StatusCode(rawValue: 0x07)
    package static let unknownOID = StatusCode(rawValue: 0x08)
    package static let readOnly = StatusCode(rawValue: 0x09)
    package static let commandRetry = StatusCode(rawValue: 0x0A)
    package static let unknown = StatusCode(rawValue: 0x0B)
    package static let notApplicable = StatusCode(rawValue: 0x0C)
    // Session
    package static let sessionNotExist = StatusCode(rawValue: 0x11)
    package static let sessionDuplicate = StatusCode(rawValue: 0x12)
    package static let sessionActive = StatusCode(rawValue: 0x13)
    package static let maxSessionsExceeded = StatusCode(rawValue: 0x14)
    package static let sessionNotConfigured = StatusCode(rawValue: 0x15)
    package static let activeSessionsOngoing = StatusCode(rawValue: 0x16)
    package static let multicastListFull = StatusCode(rawValue: 0x17)
    package static let addressNotFound = StatusCode(rawValue: 0x18)
    package static let addressAlreadyPresent = StatusCode(rawValue: 0x19)
    package static let initiationTimeTooOld = StatusCode(rawValue: 0x1A)
    package static let okNegativeDistanceReport = StatusCode(rawValue: 0x1B)
    // Ranging
    package static let rangingTxFailed = StatusCode(rawValue: 0x20)
    package static let rangingRxTimeout = StatusCode(rawValue: 0x21)
    package static let rangingRxPhyDecFailed = StatusCode(rawValue: 0x22)
    package static let rangingRxPhyToaFailed = StatusCode(rawValue: 0x23)
    package static let rangingRxPhyStsFailed = StatusCode(rawValue: 0x24)
    package static let rangingRxMacDecFailed = StatusCode(rawValue: 0x25)
    package static let rangingRxMacIeDecFailed = StatusCode(rawValue: 0x26)
    package static let rangingRxMacIeMissing = StatusCode(rawValue: 0x27)
    // Data
    package static let dataMaxTxPsduSizeExceeded = StatusCode(rawValue: 0x30)
    package static let dataRxCrcError = StatusCode(rawValue: 0x31)

    /// The spec name, e.g. "RX_TIMEOUT", or "0x5A" for a code we do not know.
    package var description: String {
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
