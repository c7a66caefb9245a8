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
    /// Whether every advert and link of ours goes out from a resolvable private address made
    /// with the identity resolving key the adapter was given (a keyed rig's), so that peers can
    /// bind our adverts to our radio (`Advertisement.Capabilities.addressBound`). Known once
    /// `start` has returned; false when the adapter has no LE privacy or was given no key.
    var boundAddresses: Bool { get }
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
    /// Starts closing a link. The caller forgets the link now: BlueZ and the world's air report
    /// no `.linkClosed` for a close on our side, and frames already on their way may still arrive.
    func disconnect(_ link: LinkID)
    /// Stops advertising and scanning and closes every link.
    func stop() async
}
