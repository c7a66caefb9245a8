/// Everything an adapter reports, in the order it happened.
package enum BLEEvent: Sendable, Equatable {
    /// `data` is the advertising data followed by the scan response data (as in mgmt's Device Found).
    case advertisement(BLEAddress, rssi: Int, data: [UInt8])
    /// A link is open; `initiatedLocally` tells our `connect` apart from a peer connecting to us.
    case linkOpened(LinkID, peer: BLEAddress, initiatedLocally: Bool)
    /// One whole SDU from the peer.
    case linkData(LinkID, [UInt8])
    case linkClosed(LinkID)
    /// Our connect reached the peer's host, which refused the channel (ECONNREFUSED: nothing
    /// listens on the PSM there, so no bridge runs at that address now). `.linkClosed` follows.
    /// Unlike a timeout this is an answer: a killed bridge's kernel keeps advertising for it, and
    /// on an extended-advertising controller every connection to it renews that advert.
    case connectRefused(LinkID)
    /// The adapter was powered off or on (by anyone: a person, bluetoothd, our own recovery).
    /// Off, it neither advertises nor discovers and its links are gone.
    case adapterPowered(Bool)
}
