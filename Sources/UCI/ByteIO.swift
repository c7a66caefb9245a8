import ByteCoding

/// Bounded little-endian reads over one UCI payload; `context` is the message name used in error
/// text, e.g. "SESSION_STATUS_NTF".
typealias ByteReader = LittleEndianReader<UCIError>

extension UCIError: TruncationError {
    package static func truncated(context: String, field: String, needed: Int, available: Int) -> UCIError {
        .truncated(what: "\(context) \(field)", needed: needed, available: available)
    }
}

extension LittleEndianReader where Failure == UCIError {
    /// A reader for a fixed layout of exactly `size` octets, checked up front.
    init(_ bytes: [UInt8], context: String, exactly size: Int) throws(UCIError) {
        guard bytes.count >= size else { throw .truncated(what: context, needed: size, available: bytes.count) }
        guard bytes.count == size else { throw .trailingBytes(what: context, count: bytes.count - size) }
        self.init(bytes, context: context)
    }

    /// Fixed layouts must be consumed exactly.
    func finish() throws(UCIError) {
        guard remaining == 0 else { throw .trailingBytes(what: context, count: remaining) }
    }

    /// A count-prefixed array of fixed-size items that must fill the rest of the payload.
    func expectRest(count: Int, stride: Int, field: String) throws(UCIError) {
        guard remaining == count * stride else {
            throw .lengthMismatch(field: "\(context) \(field)", declared: count * stride, actual: remaining)
        }
    }
}

extension Array where Element == UInt8 {
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
        bytes.appendLE(self)
        return bytes
    }
}
