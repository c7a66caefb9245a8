import ByteCoding

/// SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_CMD action.
package enum MulticastAction: UInt8, Sendable {
    case add = 0, remove = 1, addWith16ByteSubSessionKey = 2, addWith32ByteSubSessionKey = 3

    /// Octets of sub-session key each controlee entry carries for this action.
    var keySize: Int {
        switch self {
        case .add, .remove: 0
        case .addWith16ByteSubSessionKey: 16
        case .addWith32ByteSubSessionKey: 32
        }
    }
}
