import UCI

/// Where a peer's ranging rounds come from: one of our UWB sessions (its token) and the peer's
/// short address in it. A one-to-one session carries one peer; a one-to-many session, as
/// controller, one per controlee, told apart by address.
struct UWBRoute: Hashable, Sendable {
    var token: UInt32
    var peerAddress: UInt16
}
