import ByteCoding

extension PeerProtocolError: TruncationError {
    package static func truncated(context: String, field: String, needed: Int, available: Int) -> PeerProtocolError {
        .truncated(field: "\(context).\(field)", needed: needed, available: available)
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
