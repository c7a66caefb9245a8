/// Everything an adapter reports, in the order it happened.
package enum BLEEvent: Sendable, Equatable {
    /// `data` is the advertising data followed by the scan response data (as in mgmt's Device Found).
    case advertisement(BLEAddress, rssi: Int, data: [UInt8])
    /// A link is open; `initiatedLocally` tells our `connect` apart from a peer connecting to us.
    case linkOpened(LinkID, peer: BLEAddress, initiatedLocally: Bool)
    /// One whole SDU from the peer.
    case linkData(LinkID, [UInt8])
    case linkClosed(LinkID)
    /// The adapter was powered off or on (by anyone: a person, bluetoothd, our own recovery).
    /// Off, it neither advertises nor discovers and its links are gone.
    case adapterPowered(Bool)
}
