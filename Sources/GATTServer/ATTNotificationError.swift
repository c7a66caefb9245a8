/// Why `ATTServer` would not notify or indicate a value: the bridge sends nothing then.
package enum ATTNotificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No such characteristic in the database.
    case unknownCharacteristic(GATTUUID)
    /// The characteristic's properties do not allow it (notify for a notification, indicate for
    /// an indication).
    case notPermitted(GATTUUID)
    /// The client has not written 0x0001 (0x0002 for indications) to its 0x2902 descriptor.
    case notSubscribed(GATTUUID)
    /// Longer than ATT_MTU − 3 octets, which one PDU cannot carry (Core Specification Vol 3
    /// Part F §3.4.7.1); the bridge's messages are not cut short.
    case tooLong(GATTUUID, length: Int, maximum: Int)
    /// An indication is still waiting for the client's confirmation (one at a time, §3.4.7.2).
    case indicationPending(GATTUUID)

    package var description: String {
        switch self {
        case .unknownCharacteristic(let uuid): "no characteristic \(uuid) in the GATT database"
        case .notPermitted(let uuid): "characteristic \(uuid) does not allow that kind of update"
        case .notSubscribed(let uuid): "the client has not subscribed to characteristic \(uuid)"
        case .tooLong(let uuid, let length, let maximum):
            "a \(length)-octet value for characteristic \(uuid) exceeds the \(maximum) octets ATT_MTU allows"
        case .indicationPending(let uuid): "an indication on characteristic \(uuid) is still unconfirmed"
        }
    }
}
