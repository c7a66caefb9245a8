/// A peer's random 64-bit identity. Lower ids initiate: that one comparison decides who connects
/// over BLE and who is the UWB controller, so two peers never open duplicate connections.
public struct PeerID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// 16 lower-case hex digits, the form used in events.
    public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Little-endian helpers shared by the codecs in this module.
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    private(set) var offset: Int
    let context: String

    init(_ bytes: some Collection<UInt8>, context: String) {
        self.bytes = ArraySlice(bytes)
        self.offset = self.bytes.startIndex
        self.context = context
    }

    var remaining: Int { bytes.endIndex - offset }

    mutating func take(_ count: Int, _ field: String) throws(PeerProtocolError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else {
            throw .truncated(field: "\(context).\(field)", needed: count, available: remaining)
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8(_ field: String) throws(PeerProtocolError) -> UInt8 { try take(1, field).first! }

    mutating func uint<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, _ field: String
    ) throws(PeerProtocolError) -> T {
        var value: T = 0
        for (shift, byte) in try take(MemoryLayout<T>.size, field).enumerated() {
            value |= T(byte) << (8 * shift)
        }
        return value
    }

    func expectEnd() throws(PeerProtocolError) {
        if remaining != 0 { throw .trailingBytes(what: context, count: remaining) }
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        for shift in 0..<MemoryLayout<T>.size { append(UInt8(truncatingIfNeeded: value >> (8 * shift))) }
    }
}

public enum PeerProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(field: String, needed: Int, available: Int)
    case trailingBytes(what: String, count: Int)
    case unsupportedVersion(UInt8)
    case unknownMessageType(UInt8)
    case tooLarge(field: String, size: Int, limit: Int)
    case invalidValue(field: String, value: UInt64)
    case invalidText(field: String)

    public var description: String {
        switch self {
        case .truncated(let field, let needed, let available):
            "peer message truncated at \(field): needs \(needed) bytes, \(available) left"
        case .trailingBytes(let what, let count): "\(count) unexpected bytes after \(what)"
        case .unsupportedVersion(let v): "peer protocol version \(v) is not supported (this build speaks 1)"
        case .unknownMessageType(let t): "unknown peer message type 0x\(String(t, radix: 16))"
        case .tooLarge(let field, let size, let limit): "\(field) is \(size) bytes, limit \(limit)"
        case .invalidValue(let field, let value): "invalid \(field): \(value)"
        case .invalidText(let field): "\(field) is not valid UTF-8"
        }
    }
}
