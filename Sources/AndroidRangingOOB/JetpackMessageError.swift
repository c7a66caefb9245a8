import ByteCoding

/// The `truncated` case is the layout's requirement itself.
extension JetpackMessageError: TruncationError {}

/// Why octets are not a message of the rig's Jetpack layout (`JetpackRequest`, `JetpackAnswer`):
/// the layout alone, not whether the board can run what it says (`JetpackParametersError`). One
/// case per reason; each description is one sentence naming the field and its value, for the one
/// log line a refused write gets.
package enum JetpackMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The message ends before `field` (an empty write is a truncated magic octet).
    case truncated(context: String, field: String, needed: Int, available: Int)
    /// The first octet is not 0x4A ('J'): not a Jetpack message at all.
    case notJetpack(UInt8)
    /// A layout version this rig does not know (it knows 1).
    case unsupportedVersion(UInt8)
    /// A kind octet the layout does not assign, for the side that sent it.
    case unknownKind(UInt8)
    /// An enumerated octet (role, update rate, reason) outside its values.
    case invalidValue(field: String, value: UInt8)
    /// Octets after the message's last field.
    case trailingOctets(kind: String, count: Int)

    package var description: String {
        switch self {
        case let .truncated(context, field, needed, available):
            "The \(context) is truncated: its \(field) needs \(needed) octets and \(available) remain."
        case .notJetpack(let octet): "The first octet 0x\(Self.hex(octet)) is not the Jetpack magic 0x4A."
        case .unsupportedVersion(let version): "Jetpack layout version \(version) is not one this rig knows (1)."
        case .unknownKind(let kind): "Jetpack message kind 0x\(Self.hex(kind)) is not one the layout assigns."
        case let .invalidValue(field, value): "The \(field) octet \(value) is not one of its defined values."
        case let .trailingOctets(kind, count): "The Jetpack \(kind) message has \(count) octets after its last field."
        }
    }

    private static func hex(_ octet: UInt8) -> String {
        let digits = String(octet, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
}
