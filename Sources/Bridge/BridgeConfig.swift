import PeerProtocol
import Proximity
import UCI

/// Who this rig is, as peers see it.
public struct NodeIdentity: Sendable, Equatable {
    public var peerID: PeerID
    public var name: String
    public var group: UInt16
    public var card: ProfileCard
    /// Our UWB short MAC address (advertised, used in every session).
    public var uwbShortAddress: UInt16

    public init(peerID: PeerID, name: String, group: UInt16, card: ProfileCard, uwbShortAddress: UInt16) {
        self.peerID = peerID
        self.name = name
        self.group = group
        self.card = card
        self.uwbShortAddress = uwbShortAddress
    }

    /// Event `node` field.
    public var tag: String { peerID.description }
}

/// Tunables of the bridge, with the defaults a rig runs with.
public struct BridgeConfig: Sendable, Equatable {
    public var proximity: ProximityConfig = .default
    /// A peer not heard (advert, message or range) for this long is lost.
    public var peerTimeoutMilliseconds: Int64 = 6_000
    /// The UWB controller declines a profile drop it could not finish in this time (no `bump` on
    /// either side); the controlee gives up only after four times this long without hearing the
    /// peer (docs/PROTOCOL.md).
    public var exchangeTimeoutMilliseconds: Int64 = 3_000
    /// Unanswered peer messages (ranging parameters, profile cards) go again after this long.
    public var retransmitMilliseconds: Int64 = 200
    /// L2CAP PSM of the peer channel (dynamic LE range 0x80-0xFF).
    public var psm: UInt8 = 0x85
    public var uwb: UWBProfile = .init()
    /// Ranging sessions to run at once; nil takes the radio's own figure from GET_CAPS_INFO
    /// (`SUPPORTED_MAX_RANGING_SESSION_NUMBER`), or `defaultRangingSessions` if it gives none.
    public var rangingSessions: Int?
    public static let defaultRangingSessions = 4
    /// At most this many peers are tracked; a new one evicts the least recently heard peer that
    /// holds no ranging session (about 5 KB each, see README "Performance").
    public var maxPeers = 1024
    /// Radio inputs waiting for the node beyond which range notifications and adverts are dropped
    /// (counted in `stats`); other inputs always queue.
    public var inputQueueLimit = 8192
    /// How often a busy node writes a `stats` event.
    public var statsIntervalMilliseconds: Int64 = 10_000

    public init() {}
}

/// The FiRa app configuration this project uses for one-to-one DS-TWR (see firmware-notes/):
/// deferred DS-TWR, unicast, static STS with per-session values agreed out of band.
public struct UWBProfile: Sendable, Equatable {
    public var channel: UInt8 = 9
    public var preambleCodeIndex: UInt8 = 10
    public var slotDurationRSTU: UInt16 = 2400
    public var slotsPerRangingRound: UInt8 = 6
    /// 100 ms: twice the uwb_core default rate, so a bump is seen within a tenth of a second.
    public var rangingIntervalMilliseconds: UInt16 = 100

    public init() {}

    /// SET_APP_CONFIG TLVs for one side of a session described by `parameters`.
    public func appConfig(for parameters: PeerMessage.RangingParameters, asController: Bool) -> [AppConfigTLV] {
        let own = asController ? parameters.controllerAddress : parameters.controleeAddress
        let peer = asController ? parameters.controleeAddress : parameters.controllerAddress
        return [
            .deviceType(asController ? .controller : .controlee),
            .deviceRole(asController ? .initiator : .responder),
            .rangingRoundUsage(.dsTwrDeferred),
            .stsConfig(.staticSTS),
            .multiNodeMode(.unicast),
            .channel(parameters.channel),
            .numberOfControlees(1),
            .macAddressMode(.short),
            .deviceMacAddress(.short(own)),
            .dstMacAddresses([.short(peer)]),
            .slotDuration(rstu: slotDurationRSTU),
            .rangingDuration(milliseconds: UInt32(parameters.rangingIntervalMilliseconds)),
            .slotsPerRangingRound(slotsPerRangingRound),
            .preambleCodeIndex(parameters.preambleCodeIndex),
            .sfdID(2),
            .rframeConfig(3),
            .vendorID(parameters.vendorID),
            .staticSTSIV(parameters.staticSTSIV),
            .scheduleMode(1),
            .hoppingMode(0),
            .aoaResultRequest(1),
            .resultReportConfig(0x0B),
            .rangeDataNotificationConfig(1),
        ]
    }
}
