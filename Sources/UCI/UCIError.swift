/// Everything that can go wrong while turning bytes into UCI values.
///
/// Decoders throw these instead of trapping, so a misbehaving UWBS or a noisy link
/// produces a diagnosable error rather than a crash.
package enum UCIError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A field needed `needed` bytes but only `available` were left.
    case truncated(what: String, needed: Int, available: Int)
    /// The 3-bit MT field holds a reserved value (4...7).
    case invalidMessageType(UInt8)
    /// One packet's payload is longer than its header can describe.
    case payloadTooLong(length: Int, limit: Int)
    /// A reassembled message grew past the configured limit.
    case messageTooLarge(size: Int, limit: Int)
    /// A segment arrived whose MT/GID/OID differs from the message being reassembled.
    case segmentMismatch(expected: String, got: String)
    /// Bytes that cannot start a packet were dropped while resynchronising.
    case garbage(skipped: Int)
    /// A command/response/notification decoder was handed another kind of message.
    case unexpectedMessageType(MessageType)
    /// No layout is known for this GID/OID.
    case unknownOpcode(messageType: MessageType, groupID: UInt8, opcodeID: UInt8)
    /// A field holds a value outside its defined set.
    case invalidValue(field: String, value: UInt64)
    /// A length or count field disagrees with the bytes present (both in bytes).
    case lengthMismatch(field: String, declared: Int, actual: Int)
    /// Bytes remain after a fixed layout was fully read.
    case trailingBytes(what: String, count: Int)

    package var description: String {
        switch self {
        case let .truncated(what, needed, available):
            "\(what) is truncated: it needs \(needed) bytes but only \(available) are present."
        case let .invalidMessageType(value):
            "Message type \(value) is reserved; only 0 (data) to 3 (notification) are defined."
        case let .payloadTooLong(length, limit):
            "A packet payload of \(length) bytes exceeds the \(limit)-byte limit of its header."
        case let .messageTooLarge(size, limit):
            "A reassembled message of \(size) bytes exceeds the \(limit)-byte limit."
        case let .segmentMismatch(expected, got):
            "A segment of \(got) arrived while reassembling \(expected); the partial message was dropped."
        case let .garbage(skipped):
            "Skipped \(skipped) bytes that do not start a UCI packet."
        case let .unexpectedMessageType(type):
            "A \(type) message was handed to a decoder for another message type."
        case let .unknownOpcode(type, gid, oid):
            "No \(type) is known for GID \(hex(gid)) OID \(hex(oid))."
        case let .invalidValue(field, value):
            "Field \(field) holds the undefined value \(value)."
        case let .lengthMismatch(field, declared, actual):
            "Field \(field) declares \(declared) bytes but \(actual) are present."
        case let .trailingBytes(what, count):
            "\(what) has \(count) unexpected trailing bytes."
        }
    }
}

/// "0x0A" style hex for log and error text (no Foundation in this module).
func hex(_ value: UInt8) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "0x" + (value < 0x10 ? "0" + digits : digits)
}
