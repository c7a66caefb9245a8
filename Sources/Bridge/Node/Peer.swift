import BLE
import PeerProtocol

/// Everything a node holds about one peer, in one place: its protocol state, its proximity, what
/// its adverts said, its place in the ranging schedule and the routes that lead to it. `NodeCore`
/// keeps one of these per peer id, so forgetting a peer is one removal (and the two indexes
/// below, which `NodeCore` clears from what this record lists).
struct Peer {
    var machine: PeerMachine
    var proximity: PeerProximity
    /// The protocol version its adverts speak, and the capabilities they announce (none yet for a
    /// peer that connected to us before we heard it).
    var version: PeerMessage.Version
    var capabilities: Advertisement.Capabilities
    /// Granted: when the grant started; otherwise since when it waits.
    var since: Int64
    /// When it was last heard, as of the last tick or its discovery: for eviction.
    var lastHeard: Int64
    /// The one-to-many session it has a place in as our controlee, as of the last tick.
    var sharedPlace: UInt32?
    /// Where its ranging rounds come from, while a UWB session runs.
    var route: UWBRoute?
    /// The links bound to it (`NodeCore.peerByLink` entries to clear when it goes).
    var links: Set<LinkID> = []
    /// When a round with it last brought a distance: `AirLoad` counts failures only of sessions
    /// that work.
    var lastGoodRound: Int64?

    /// Whether the scheduler gives it one of the radio's ranging sessions (its machine's view,
    /// which only the scheduler's `granted`/`revoked` inputs change).
    var granted: Bool { machine.granted }
}
