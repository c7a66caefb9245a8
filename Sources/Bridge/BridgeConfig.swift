import NearbyInteractionAccessory
import PeerProtocol
import Proximity
import UCI

/// Tunables of the bridge, with the defaults a rig runs with.
package struct BridgeConfig: Sendable, Equatable {
    package var proximity: ProximityConfig = .default
    /// A peer not heard (advert, message or range) for this long is lost.
    package var peerTimeoutMilliseconds: Int64 = 6_000
    /// An outgoing connection not up after this long is abandoned and tried again at the peer's
    /// next advert. The kernel would wait 40 s (L2CAP's connect timeout) for an LE connection
    /// that its controller never completes; a peer we hear advertising connects within a second
    /// or two when all is well.
    package var connectTimeoutMilliseconds: Int64 = 10_000
    /// The UWB controller declines a profile drop it could not finish in this time (no `bump` on
    /// either side); the controlee gives up only after four times this long without hearing the
    /// peer (docs/PROTOCOL.md).
    package var exchangeTimeoutMilliseconds: Int64 = 3_000
    /// Unanswered peer messages (ranging parameters, profile cards) go again after this long.
    package var retransmitMilliseconds: Int64 = 200
    /// L2CAP PSM of the peer channel (dynamic LE range 0x80-0xFF).
    package var psm: UInt8 = 0x85
    package var uwb: UWBProfile = .init()
    /// How the board's firmware wants to be driven (bring-up, app configuration).
    package var uwbDialect: UWBDialectName = .qorvo
    /// Ranging sessions to run at once; nil takes the radio's own figure from GET_CAPS_INFO
    /// (`SUPPORTED_MAX_RANGING_SESSION_NUMBER`), or `defaultRangingSessions` if it gives none.
    package var rangingSessions: Int?
    package static let defaultRangingSessions = 4
    /// Peers this node controls (it has the lower peer id) that may share one UWB session: a FiRa
    /// one-to-many session (MULTI_NODE_MODE 1, controlees added and removed with
    /// SESSION_UPDATE_CONTROLLER_MULTICAST_LIST), so one of the radio's sessions ranges with up to
    /// this many peers. 1 (the default) keeps every session one-to-one: one-to-many is not yet
    /// verified on a real board, and a peer running an older bridge rejects the parameters of a
    /// shared session (docs/PROTOCOL.md). Raise it (8 is a common board limit) when the session
    /// budget, not the radio's air time, limits how many peers a rig ranges with.
    package var controleesPerSession = 1
    /// Whether the scheduler sheds far peers while the rig's rounds say the air is full
    /// (`AirLoad`). Off only to measure the fixed scheduling it replaced (`proximity-eval --hall`).
    package var shedsFarPeersWhenAirIsFull = true
    /// At most this many peers are tracked; a new one evicts the least recently heard peer that
    /// holds no ranging session (about 5 KB each, see docs/PERFORMANCE.md).
    package var maxPeers = 1024
    /// Radio inputs waiting for the node beyond which range notifications and adverts are dropped
    /// (counted in `stats`); other inputs always queue.
    package var inputQueueLimit = 8192
    /// How often a busy node writes a `stats` event.
    package var statsIntervalMilliseconds: Int64 = 10_000
    /// Whether a Bluetooth adapter that cannot be used when the node starts ends the start with
    /// an error (a rig named its adapter: a typo or a missing dongle must not pass for a working
    /// rig) rather than letting it range over UWB alone.
    package var bluetoothRequired = false
    /// How readings are corrected before the proximity engine sees them.
    package var rangeCorrection = RangeCorrectionSettings()
    /// The event key and what it allows (docs/PROTOCOL.md, "Security").
    package var security = PeerSecuritySettings()
    /// The octet order of the short addresses and vendor id in a phone's session on UCI
    /// (`AccessoryOctetOrder`: AOSP's code by default; public sources do not settle it).
    package var phoneOctetOrder: AccessoryOctetOrder = .asInBlobs

    package init() {}
}
