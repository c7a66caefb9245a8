import ByteCoding
/// A peer's random 64-bit identity. Lower ids initiate: that one comparison decides who connects
/// over BLE and who is the UWB controller, so two peers never open duplicate connections.
package struct PeerID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }

    package static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// 16 lower-case hex digits, the form used in events.
    package var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Bounded little-endian reads over one peer message; `context` names it in error text.
typealias ByteReader = LittleEndianReader<PeerProtocolError>

extension PeerProtocolError: TruncationError {
    package static func truncated(context: String, field: String, needed: Int, available: Int) -> PeerProtocolError {
        .truncated(field: "\(context).\(field)", needed: needed, available: available)
    }
}

extension LittleEndianReader where Failure == PeerProtocolError {
    func expectEnd() throws(PeerProtocolError) {
        if remaining != 0 { throw .trailingBytes(what: context, count: remaining) }
    }
}

package enum PeerProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(field: String, needed: Int, available: Int)
    case trailingBytes(what: String, count: Int)
    case unsupportedVersion(UInt8)
    case unknownMessageType(UInt8)
    case tooLarge(field: String, size: Int, limit: Int)
    case invalidValue(field: String, value: UInt64)
    case invalidText(field: String)

    package var description: String {
        switch self {
        case .truncated(let field, let needed, let available):
            "peer message truncated at \(field): needs \(needed) bytes, \(available) left"
        case .trailingBytes(let what, let count): "\(count) unexpected bytes after \(what)"
        case .unsupportedVersion(let v): "peer protocol version \(v) is not supported (this build speaks 1 and 2)"
        case .unknownMessageType(let t): "unknown peer message type 0x\(String(t, radix: 16))"
        case .tooLarge(let field, let size, let limit): "\(field) is \(size) bytes, limit \(limit)"
        case .invalidValue(let field, let value): "invalid \(field): \(value)"
        case .invalidText(let field): "\(field) is not valid UTF-8"
        }
    }
}
