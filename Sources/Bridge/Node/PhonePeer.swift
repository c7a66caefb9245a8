import GATTServer
import UCI

/// A phone the rig serves (issues 33 and 31): its out-of-band session,
/// the GATT client it writes from, its proximity, and where its board session stands. `NodeCore`
/// keeps one per phone beside its rigs (`NodeCore+Phones`); its id is drawn when the phone
/// first writes, since a phone's address rotates and its app names nothing.
struct PhonePeer {
    var session: PhoneSession
    var client: GATTClient
    /// The notify characteristic of the service the phone last wrote on: its answers go there.
    var answerOn: GATTUUID
    var proximity: PeerProximity
    /// Whether its `peer.found` went out: once its first message was accepted.
    var found = false
    /// Whether its machine asked for a board session that has not ended yet.
    var inSession = false
    /// The attendee token its app wrote, as hex (never logged).
    var token: String?
    /// The session it asked for while no ranging session was free for a phone, and since when.
    var waiting: (configuration: SessionRequest, since: Int64)?
    /// The session the board runs for it, from the request on; nil when it holds none.
    var board: BoardSession?
    /// The last `bump_id` it had (its bumps count from 1).
    var lastBumpID: UInt32 = 0
    /// When it last wrote: a phone that goes quiet is not timed out (its NI session needs no
    /// writes while it ranges), but eviction goes by it.
    var lastHeard: Int64

    /// The board session a phone's machine asked for: its id and its TLVs.
    struct SessionRequest {
        var sessionID: UInt32
        var appConfig: [AppConfigTLV]
    }

    /// A phone's session on the board, from the open request to its DEINIT.
    struct BoardSession: Equatable {
        var sessionID: UInt32
        /// The phone's UWB short address as its rounds report it.
        var phoneAddress: UInt16
        /// The board's handle for it, once the session manager reported it started.
        var token: UInt32?
        /// Its close was asked for: its rounds are no longer read, its DEINIT is awaited.
        var closing = false
    }
}
