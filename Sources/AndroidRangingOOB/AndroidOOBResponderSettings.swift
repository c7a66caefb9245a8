/// What an `AndroidOOBResponder` needs to know about the rig: the board it offers, the address
/// it ranges from, and how long it waits for the board. One value for every phone of a rig.
package struct AndroidOOBResponderSettings: Equatable, Sendable {
    /// What the Capability Response offers and a Configuration is checked against.
    package var board: AndroidBoardCapabilities
    /// The rig's UWB short address, in wire order: in the Capability Response and in
    /// DEVICE_MAC_ADDRESS.
    package var shortAddress: [UInt8]
    /// How long the board may take from the start being asked to ACTIVE, in ms.
    package var startTimeoutMilliseconds: Int64
    /// How long the board may take from the stop being asked to DEINIT, in ms.
    package var stopTimeoutMilliseconds: Int64

    /// 5 s either way, as the iPhone accessory session waits (`AccessorySessionSettings`): a
    /// working board answers in tens of milliseconds.
    package static let defaultTimeoutMilliseconds: Int64 = 5000

    package init(
        board: AndroidBoardCapabilities, shortAddress: [UInt8],
        startTimeoutMilliseconds: Int64 = Self.defaultTimeoutMilliseconds,
        stopTimeoutMilliseconds: Int64 = Self.defaultTimeoutMilliseconds
    ) {
        precondition(shortAddress.count == 2, "a UWB short address is 2 octets")
        self.board = board
        self.shortAddress = shortAddress
        self.startTimeoutMilliseconds = startTimeoutMilliseconds
        self.stopTimeoutMilliseconds = stopTimeoutMilliseconds
    }
}
