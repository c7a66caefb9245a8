import PeerProtocol
import Proximity
import UCI

/// Who this rig is, as peers see it.
package struct NodeIdentity: Sendable, Equatable {
    package var peerID: PeerID
    package var name: String
    package var group: UInt16
    package var card: ProfileCard
    /// Our UWB short MAC address (advertised, used in every session).
    package var uwbShortAddress: UInt16

    package init(peerID: PeerID, name: String, group: UInt16, card: ProfileCard, uwbShortAddress: UInt16) {
        self.peerID = peerID
        self.name = name
        self.group = group
        self.card = card
        self.uwbShortAddress = uwbShortAddress
    }

    /// Event `node` field.
    package var tag: String { peerID.description }
}

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

    package init() {}
}

/// The received-level bias table of the board family and each board's calibrated offset
/// (docs/PROXIMITY.md, "Range correction"; firmware-notes/README.md for the DW3000 default).
package struct RangeCorrectionSettings: Sendable, Equatable {
    /// The table's name as the `device` event reports it, and the table (nil: no correction).
    package var tableName = "aps011-prf64"
    package var table: RangeBiasTable? = .aps011PRF64
    /// Offsets (metres read too long) by board (`DeviceInfo.boardKey`), as `nearby-bridge calibrate` wrote them.
    package var offsets: [String: Double] = [:]

    package init() {}

    /// The correction for one board: its calibrated offset if there is one.
    package func correction(forBoard board: String) -> RangeCorrection {
        RangeCorrection(
            table: table, tableName: tableName, offsetMetres: offsets[board] ?? 0, calibrated: offsets[board] != nil)
    }
}

/// The session settings this project uses for DS-TWR, one-to-one or one-to-many, whatever the
/// board (see firmware-notes/): deferred DS-TWR, static STS with per-session values agreed out of
/// band. How they become SET_APP_CONFIG TLVs is the `UWBDialect`'s business.
package struct UWBProfile: Sendable, Equatable {
    package var channel: UInt8 = 9
    package var preambleCodeIndex: UInt8 = 10
    package var slotDurationRSTU: UInt16 = 2400
    package var slotsPerRangingRound: UInt8 = 6
    /// 100 ms: twice the uwb_core default rate, so a bump is seen within a tenth of a second.
    package var rangingIntervalMilliseconds: UInt16 = 100
    /// The regulatory region the board must keep (ISO 3166-1 alpha-2, e.g. "DE"), sent at
    /// bring-up with Android's vendor command ANDROID_SET_COUNTRY_CODE; nil sends nothing and
    /// the board keeps the region it was built or flashed for.
    package var countryCode: String?

    package init() {}

    /// Slots per round of a one-to-many session for up to `controlees`: the control and poll
    /// messages, a response and a result report per controlee, and the final message (deferred
    /// DS-TWR). Fixed when the session starts, since controlees join while it runs. With 8
    /// controlees and 2400-RSTU (2 ms) slots a round takes 38 ms of the 100 ms interval.
    /// Derived from the FiRa round structure, not measured on a board.
    package func oneToManySlots(controlees: Int) -> UInt8 {
        UInt8(clamping: max(Int(slotsPerRangingRound), 3 + 2 * controlees))
    }
}
