/// The Error Response's error codes the server uses (Core Specification Vol 3 Part F §3.4.1.1,
/// table 3.4; Value Not Allowed since Core 5.2).
package enum ATTErrorCode: UInt8, Sendable {
    case invalidHandle = 0x01
    case readNotPermitted = 0x02
    case writeNotPermitted = 0x03
    case invalidPDU = 0x04
    case insufficientAuthentication = 0x05
    case requestNotSupported = 0x06
    case invalidOffset = 0x07
    case attributeNotFound = 0x0A
    case attributeNotLong = 0x0B
    case invalidAttributeValueLength = 0x0D
    case unlikelyError = 0x0E
    case insufficientEncryption = 0x0F
    case unsupportedGroupType = 0x10
    case valueNotAllowed = 0x13
}
