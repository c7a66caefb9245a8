import BLE
import PeerProtocol

extension PeerMachine {
    /// Where the machine is. Each case holds exactly what is valid in it, so a link's secret, its
    /// UWB session, a proposal or a drop cannot outlive the link they belong to.
    enum State {
        case discovered
        case connecting(Connecting)
        case negotiating(Negotiating)
        case ranging(Ranging)
    }

    /// Our connection attempt, until the link (v2: its handshake) is up.
    struct Connecting {
        let link: LinkID
        /// For the connect timeout.
        let since: Int64
        /// Where to: a link that opens proves the address, one that does not counts against it.
        let address: BLEAddress
        /// When the link opened and our v2 handshake went out: for the handshake timeout.
        var handshakeSince: Int64?
    }

    /// A link that is up (the peer's `hello` had or ours sent): what its handshake settled and
    /// what runs over it.
    struct OpenLink {
        let id: LinkID
        /// On a v2 link: the secret both sides derive each UWB session's STS values from, so they
        /// never cross the air. Nil on a v1 link, whose STS values travel in `rangingParameters`.
        let rangingSecret: [UInt8]?
        /// One-to-one sessions on this link use provisioned STS: the controller decides (both
        /// boards can, the peer's as its private advert says) and says so in its `hello`.
        let provisionedSTS: Bool
        /// One-to-one sessions on this link hop rounds: the controller decides (both boards
        /// can, the peer's as its private advert says) and says so in its `hello`.
        let hops: Bool
        /// The one-to-many session we reserved this peer a place in, as its controller.
        var sharedSession: UInt32?
        /// The profile drop under way; a closing link abandons it.
        var exchange: Exchange?
        /// Our v1 link, until the peer's first message on it: where to, and since when. A v1 link
        /// proves nothing when it opens (whoever replays a v1 advert accepts it), only an answer does.
        var unanswered: (address: BLEAddress, since: Int64)?
    }

    /// The link is up; the two sides agree on a UWB session and start it.
    struct Negotiating {
        var link: OpenLink
        var step: Step

        enum Step {
            /// Controller of a one-to-many session: waiting for the place the session manager reserves.
            case awaitingPlace
            /// Controller: the proposal goes again every `retransmit` until the controlee accepts it.
            case proposing(PeerMessage.RangingParameters, sentAt: Int64)
            /// Controller: accepted; our session starts. A failed start proposes again.
            case starting(UWBSessionRequest, proposedAt: Int64)
            /// Controlee: waiting for parameters, or for the first repeat after a failed start.
            case awaitingParameters
            /// Controlee: our session starts; `parametersAccepted` goes once it runs.
            case accepting(UWBSessionRequest)
        }

        /// The session being started on our board, either role.
        var starting: UWBSessionRequest? {
            switch step {
            case .starting(let request, _), .accepting(let request): request
            case .awaitingPlace, .proposing, .awaitingParameters: nil
            }
        }
    }

    /// Both sessions ran once: ranging, or starting ours again after the board came back (or,
    /// as controlee, after the controller proposed another session).
    struct Ranging {
        var link: OpenLink
        var session: UWBSessionRequest
        /// The running session's token; nil while it is being started again.
        var token: UInt32?
    }

    /// A profile drop in progress. It completes only with the peer's card *and* the ack of ours.
    struct Exchange {
        var bumpID: UInt32
        var startedAt: Int64
        var peerCard: String?
        var ownCardAcked = false
        var distance: Double?
        /// When our card last went out; it goes again every `retransmit` until answered.
        var cardSentAt: Int64
    }
}
