
/// Bounds-checked little-endian reads over one message: the one reader behind the UCI, peer
/// protocol and BlueZ mgmt codecs. Every read names its field, so a short input reports exactly
/// what was missing. Reads work in place (range notifications are the hot path: an array per
/// field was once most of the UCI decoder's cost).
///
/// Public, unlike the rest of the package, for one reason: the compiler inlines an `@inlinable`
/// method into another module only when it is public. On a `package` type the decoders called
/// every read (`objdump -d` of the UCI decoder, 2026-11-29; docs/PERFORMANCE.md).
public struct LittleEndianReader<Failure: TruncationError> {
    /// An array rather than a slice: indexing it is cheaper, and slices are rare and small.
    @usableFromInline let bytes: [UInt8]
    /// Index into `bytes` of the next octet.
    @usableFromInline var offset = 0
    /// The message being read, for error text.
    public let context: String

    @inlinable
    public init(_ bytes: [UInt8], context: String) {
        self.bytes = bytes
        self.context = context
    }

    @inlinable
    public init(_ bytes: some Collection<UInt8>, context: String) {
        self.init(Array(bytes), context: context)
    }

    @inlinable
    public var remaining: Int { bytes.count - offset }

    /// Reads are inlined into the decoders (a call per field cost the UCI decoder 40 %); the error
    /// is built out of line.
    @inlinable @inline(__always)
    func check(_ count: Int, _ field: String) throws(Failure) {
        guard count >= 0, count <= remaining else { throw truncation(count, field) }
    }

    @usableFromInline @inline(never)
    func truncation(_ count: Int, _ field: String) -> Failure {
        Failure.truncated(context: context, field: field, needed: count, available: remaining)
    }

    /// The next `count` octets, without copying them.
    @inlinable @inline(__always)
    public mutating func take(_ count: Int, _ field: String) throws(Failure) -> ArraySlice<UInt8> {
        try check(count, field)
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Steps over `count` octets (reserved fields) without copying them.
    @inlinable @inline(__always)
    public mutating func skip(_ count: Int, _ field: String) throws(Failure) {
        try check(count, field)
        offset += count
    }

    @inlinable @inline(__always)
    public mutating func bytes(_ count: Int, _ field: String) throws(Failure) -> [UInt8] {
        Array(try take(count, field))
    }

    /// An unsigned value of `size` octets (1 to 8), for layouts whose field widths vary.
    @inlinable @inline(__always)
    public mutating func uint(_ size: Int, _ field: String) throws(Failure) -> UInt64 {
        precondition(size <= 8, "a little-endian field wider than 64 bits")
        try check(size, field)
        var value: UInt64 = 0
        for index in 0..<size { value |= UInt64(bytes[offset + index]) << (8 * index) }
        offset += size
        return value
    }

    @inlinable @inline(__always)
    public mutating func uint<T: FixedWidthInteger & UnsignedInteger>(_: T.Type, _ field: String) throws(Failure) -> T {
        T(truncatingIfNeeded: try uint(MemoryLayout<T>.size, field))
    }

    @inlinable @inline(__always)
    public mutating func u8(_ field: String) throws(Failure) -> UInt8 { try uint(UInt8.self, field) }

    @inlinable @inline(__always)
    public mutating func u16(_ field: String) throws(Failure) -> UInt16 { try uint(UInt16.self, field) }

    @inlinable @inline(__always)
    public mutating func u32(_ field: String) throws(Failure) -> UInt32 { try uint(UInt32.self, field) }

    /// Everything left, for layouts that end in an open-ended field.
    @inlinable
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` as little-endian octets.
    @inlinable
    public mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        for shift in stride(from: 0, to: T.bitWidth, by: 8) { append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}
