/// Bounds-checked little-endian reads over one message payload.
///
/// Every read names its field so a short payload reports exactly what was missing.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0
    /// Message name used in error text, e.g. "SESSION_STATUS_NTF".
    let message: String

    init(_ bytes: [UInt8], message: String) {
        self.bytes = bytes
        self.message = message
    }

    /// A reader for a fixed layout of exactly `size` octets, checked up front.
    init(_ bytes: [UInt8], message: String, exactly size: Int) throws(UCIError) {
        guard bytes.count >= size else { throw .truncated(what: message, needed: size, available: bytes.count) }
        guard bytes.count == size else { throw .trailingBytes(what: message, count: bytes.count - size) }
        self.init(bytes, message: message)
    }

    var remaining: Int { bytes.count - offset }

    mutating func bytes(_ count: Int, _ field: String) throws(UCIError) -> [UInt8] {
        guard count <= remaining else {
            throw .truncated(what: "\(message) \(field)", needed: count, available: remaining)
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func u8(_ field: String) throws(UCIError) -> UInt8 {
        UInt8(truncatingIfNeeded: try uint(1, field))
    }

    mutating func u16(_ field: String) throws(UCIError) -> UInt16 {
        UInt16(truncatingIfNeeded: try uint(2, field))
    }

    mutating func u32(_ field: String) throws(UCIError) -> UInt32 {
        UInt32(truncatingIfNeeded: try uint(4, field))
    }

    /// Reads in place: notifications arrive ten times a second per peer, and an array per field
    /// was most of the decoder's cost.
    mutating func uint(_ size: Int, _ field: String) throws(UCIError) -> UInt64 {
        guard size <= remaining else {
            throw .truncated(what: "\(message) \(field)", needed: size, available: remaining)
        }
        var value: UInt64 = 0
        for index in stride(from: offset + size - 1, through: offset, by: -1) { value = value << 8 | UInt64(bytes[index]) }
        offset += size
        return value
    }

    /// Everything left, for layouts that end in an open-ended field (vendor data).
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    /// Fixed layouts must be consumed exactly.
    func finish() throws(UCIError) {
        guard remaining == 0 else { throw .trailingBytes(what: message, count: remaining) }
    }

    /// A count-prefixed array of fixed-size items that must fill the rest of the payload.
    func expectRest(count: Int, stride: Int, field: String) throws(UCIError) {
        guard remaining == count * stride else {
            throw .lengthMismatch(field: "\(message) \(field)", declared: count * stride, actual: remaining)
        }
    }
}

/// Little-endian appends for building payloads.
extension Array where Element == UInt8 {
    mutating func append<T: FixedWidthInteger & UnsignedInteger>(le value: T) {
        for shift in stride(from: 0, to: T.bitWidth, by: 8) {
            append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    /// A one-octet count or length; larger values cannot be encoded.
    mutating func append(count: Int, of what: @autoclosure () -> String) {
        precondition(count <= 0xFF, "\(what()) does not fit its one-octet count or length")
        append(UInt8(count))
    }
}

extension FixedWidthInteger where Self: UnsignedInteger {
    /// The value as little-endian octets.
    var littleEndianBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.append(le: self)
        return bytes
    }
}
