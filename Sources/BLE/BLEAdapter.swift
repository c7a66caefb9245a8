/// A 48-bit Bluetooth device address, most significant byte first in `description`.
package struct BLEAddress: Hashable, Sendable, CustomStringConvertible {
    /// Little-endian, as on the HCI wire.
    package var bytes: [UInt8]

    package init(bytes: [UInt8]) {
        precondition(bytes.count == 6, "a BD_ADDR is 6 bytes")
        self.bytes = bytes
    }

    package var description: String {
        bytes.reversed().map { b in (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true) }
            .joined(separator: ":")
    }
}

/// One connection-oriented channel to a peer (an L2CAP CoC on real radios).
package typealias LinkID = UInt32

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

package enum BLEAdapterError: Error, Equatable, Sendable, CustomStringConvertible {
    case unavailable(String)
    case unknownLink(LinkID)
    case disconnected(String)

    package var description: String {
        switch self {
        case .unavailable(let why): "Bluetooth adapter unavailable: \(why)"
        case .unknownLink(let link): "no open link \(link)"
        case .disconnected(let why): "Bluetooth backend disconnected: \(why)"
        }
    }
}

/// The small seam between the bridge and a Bluetooth LE backend (the virtual air today; BlueZ
/// mgmt + L2CAP sockets, or a raw HCI user channel, later). Events are delivered in order to the
/// handler installed with `start`.
package protocol BLEAdapter: AnyObject, Sendable {
    /// Short backend name for `device` events, e.g. "virtual" or "hci0".
    var backendName: String { get }
    /// Installs the event handler and brings the adapter up.
    func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws
    /// Replaces our advertising and scan response data (legacy: at most 31 bytes each).
    func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws
    func startScanning() async throws
    /// Starts opening a link and names it, without waiting: completion arrives as `.linkOpened`
    /// (or `.linkClosed` on failure). Throws only when the attempt cannot even start.
    ///
    /// This and the two below never wait on the radio or a peer (they queue or fail): the node's
    /// core calls them for every peer from one thread, and one slow peer must not hold the rest.
    func connect(to peer: BLEAddress) throws -> LinkID
    /// Sends one SDU, or fails at once (unknown link, no room to queue it).
    func send(_ sdu: [UInt8], on link: LinkID) throws
    /// Starts closing a link; `.linkClosed` follows.
    func disconnect(_ link: LinkID)
    /// Stops advertising and scanning and closes every link.
    func stop() async
}
