import ByteCoding

/// One controlee entry of SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_CMD.
package struct Controlee: Hashable, Sendable {
    package var shortAddress: UInt16
    package var subSessionID: UInt32
    /// Empty for add/remove; 16 or 32 octets for the keyed add actions.
    package var subSessionKey: [UInt8]

    package init(shortAddress: UInt16, subSessionID: UInt32, subSessionKey: [UInt8] = []) {
        self.shortAddress = shortAddress
        self.subSessionID = subSessionID
        self.subSessionKey = subSessionKey
    }
}
