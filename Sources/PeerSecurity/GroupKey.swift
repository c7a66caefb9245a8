import ByteCoding
import Crypto

/// The secret the rigs of one event share (`groupKey` in the config, or a key file made by
/// `nearby-bridge keygen`). Everything secret in peer protocol v2 is derived from it through
/// HKDF-SHA256 with a label per use (`KeySchedule`); the key itself never leaves the process.
///
/// Text form: 64 hexadecimal digits, optionally followed by a newline (a key file is that one line).
/// `description` never shows key bytes, only a fingerprint rigs can compare in their logs.
package struct GroupKey: Sendable, Equatable, CustomStringConvertible {
    package static let byteCount = 32
    let bytes: [UInt8]

    package init(bytes: [UInt8]) throws(GroupKeyError) {
        guard bytes.count == Self.byteCount else { throw .wrongLength(bytes.count) }
        self.bytes = bytes
    }

    private init(drawn bytes: [UInt8]) { self.bytes = bytes }

    /// Parses the text form. Errors say what a key looks like without echoing what was given.
    package init(text: String) throws(GroupKeyError) {
        let digits = text.trimmingWhitespace()
        guard digits.count == 2 * Self.byteCount, let bytes = [UInt8](hexString: digits) else { throw .notHex(length: digits.count) }
        try self.init(bytes: bytes)
    }

    /// A new key from the system's secure random source.
    package static func generate() -> GroupKey {
        GroupKey(drawn: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    /// The text form (for `keygen` only: never log it).
    package var text: String { bytes.hexString }

    /// 8 hex digits that identify the key without revealing it: HKDF output under its own label,
    /// so it says nothing about any key actually used on the air.
    package var fingerprint: String {
        KeySchedule.derive(from: self, label: "fingerprint", count: 4).hexString
    }

    package var description: String { "GroupKey(fingerprint \(fingerprint))" }
}

package enum GroupKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    case wrongLength(Int)
    case notHex(length: Int)

    package var description: String {
        switch self {
        case .wrongLength(let count): "a group key is \(GroupKey.byteCount) bytes, not \(count)"
        case .notHex(let length):
            "a group key is \(2 * GroupKey.byteCount) hexadecimal digits (got \(length) characters); make one with `nearby-bridge keygen`"
        }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
