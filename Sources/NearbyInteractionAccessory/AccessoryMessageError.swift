/// Why octets from a phone (or, for the emulated phone, from an accessory) are not a message of
/// the accessory protocol. Each description is one sentence naming what was wrong.
package enum AccessoryMessageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A write with no octets at all.
    case empty
    /// The first octet is none of the six message ids.
    case unknownID(UInt8)
    /// A message that carries nothing came with `size` more octets.
    case unexpectedPayload(AccessoryMessageID, size: Int)
    /// A message that carries a configuration blob came without one.
    case missingPayload(AccessoryMessageID)
    /// The blob is longer than any configuration layout can be.
    case payloadTooLarge(AccessoryMessageID, size: Int, limit: Int)

    package var description: String {
        switch self {
        case .empty: "The accessory message is empty: it has no message id octet."
        case .unknownID(let id):
            "Message id 0x\(String(id, radix: 16, uppercase: true)) is not one of the accessory protocol's (0x01-0x03, 0x0A-0x0C)."
        case .unexpectedPayload(let id, let size): "The \(id) message carries \(size) octets where it should carry none."
        case .missingPayload(let id): "The \(id) message carries no configuration data."
        case .payloadTooLarge(let id, let size, let limit):
            "The \(id) message carries \(size) octets, more than the \(limit) any configuration layout can have."
        }
    }
}
