import ByteCoding

/// The `truncated` case is the protocol's requirement itself.
extension OOBMessageError: TruncationError {}

/// Why octets from a phone are not a message of Android's ranging OOB exchange. One case per
/// reason; each description is one sentence naming the field and its value, fit for the one log
/// line a refused message gets.
package enum OOBMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The message ends before `field` (an empty write is a truncated version octet).
    case truncated(context: String, field: String, needed: Int, available: Int)
    /// A version octet no published version has (0, or above 3).
    case unsupportedVersion(UInt8)
    /// A message id the spec does not assign (0x4, 0x5, above 0x8).
    case unknownMessageID(UInt8)
    /// A message the version's layout does not have (motion notification before version 3).
    case notInVersion(OOBMessageID, OOBVersion)
    /// Bits no published version assigns, in a bitmap.
    case reservedBits(field: String, value: UInt16)
    /// A block's technology id no published version assigns.
    case unknownTechnology(UInt8)
    /// A block whose size octet (which counts its 2 header octets) is not its layout's.
    case blockSizeMismatch(RangingTechnology, size: Int, expected: Int)
    /// Two blocks for one technology.
    case duplicateTechnology(RangingTechnology)
    /// The blocks present are not the technologies the message's bitmap names.
    case blocksDisagreeWithBitmap(bitmap: RangingTechnologySet, blocks: RangingTechnologySet)
    /// A configuration that starts technologies it does not configure.
    case startsUnconfigured(RangingTechnologySet)
    /// An enumerated octet (role, mode, transitioning, motion) outside its values.
    case invalidValue(field: String, value: UInt8)
    /// Octets after the message's last field.
    case trailingOctets(OOBMessageID, count: Int)

    package var description: String {
        switch self {
        case let .truncated(context, field, needed, available):
            "The \(context) is truncated: its \(field) needs \(needed) octets and \(available) remain."
        case .unsupportedVersion(let version): "OOB version \(version) is not one of the published versions 1-3."
        case .unknownMessageID(let id):
            "Message id 0x\(String(id, radix: 16, uppercase: true)) is not one the OOB specification assigns (0x0-0x3, 0x6-0x8)."
        case let .notInVersion(id, version): "The \(id) message does not exist in OOB \(version)."
        case let .reservedBits(field, value):
            "The \(field) bitmap 0x\(String(value, radix: 16, uppercase: true)) sets bits no published version assigns."
        case .unknownTechnology(let id): "Technology id 0x\(String(id, radix: 16, uppercase: true)) is not one the OOB specification assigns."
        case let .blockSizeMismatch(technology, size, expected):
            "The \(technology) block's size is \(size) octets where its layout has \(expected)."
        case .duplicateTechnology(let technology): "The message carries two \(technology) blocks."
        case let .blocksDisagreeWithBitmap(bitmap, blocks):
            "The message's bitmap names \(bitmap) but its blocks are for \(blocks)."
        case .startsUnconfigured(let technologies): "The configuration starts \(technologies) without configuring it."
        case let .invalidValue(field, value): "The \(field) octet \(value) is not one of its defined values."
        case let .trailingOctets(id, count): "The \(id) message has \(count) octets after its last field."
        }
    }
}
