/// Version of the event schema (`schema/events-v1.schema.json`). Bump it, and the schema file,
/// whenever a field changes meaning or disappears; adding optional fields keeps the version.
package let eventSchemaVersion = 1

/// One proximity event as it appears on stdout, before `seq` and `ts` are stamped.
///
/// `node` names the rig (its peer id) that observed the event, so streams from several rigs (or
/// the demo's virtual peers) can be merged and still read correctly.
package struct Event: Sendable, Equatable {
    package var node: String
    package var body: Body

    package init(node: String, body: Body) {
        self.node = node
        self.body = body
    }

    package enum Body: Sendable, Equatable {
        case device(Device)
        case peerFound(PeerFound)
        case peerNamed(PeerNamed)
        case range(Range)
        case near(Zone)
        case far(Zone)
        case bump(Bump)
        case peerLost(PeerLost)
        case nearest(Nearest)
        case rough(Rough)
        case stats(Stats)
    }

    /// The `type` field.
    package var type: String {
        switch body {
        case .device: "device"
        case .peerFound: "peer.found"
        case .peerNamed: "peer.named"
        case .range: "range"
        case .near: "near"
        case .far: "far"
        case .bump: "bump"
        case .peerLost: "peer.lost"
        case .nearest: "nearest"
        case .rough: "rough"
        case .stats: "stats"
        }
    }

    /// Whether the stream may drop this event when stdout cannot keep up: only `range`, which
    /// comes ten times a second per ranged peer and whose loss the next round repairs.
    package var isSheddable: Bool {
        if case .range = body { true } else { false }
    }

    /// Radio state: which radio, through which backend, and what it is doing now.
    package struct Device: Sendable, Equatable {
        package enum Radio: String, Sendable { case uwb, ble }
        package enum State: String, Sendable {
            case ready, active, error, unavailable, removed
        }
        package var radio: Radio
        package var state: State
        package var backend: String
        /// Free-form facts the radio reported (UCI/MAC/PHY versions, vendor data), or why it is unavailable.
        package var detail: [String: String]

        package init(radio: Radio, state: State, backend: String, detail: [String: String] = [:]) {
            self.radio = radio
            self.state = state
            self.backend = backend
            self.detail = detail
        }
    }

    package struct PeerFound: Sendable, Equatable {
        package var peer: String
        package var name: String
        package var rssi: Int?
        /// Set for a phone (`"kind": "phone"`); a rig's `peer.found` has no kind.
        package var phone: Phone?
        package init(peer: String, name: String, rssi: Int?, phone: Phone? = nil) {
            self.peer = peer
            self.name = name
            self.rssi = rssi
            self.phone = phone
        }
    }

    /// What the events of a phone peer (issue 33) say beyond a rig's: its platform, and the
    /// attendee token its app wrote, if any (hex; unauthenticated: the event's backend checks it).
    package struct Phone: Sendable, Equatable {
        package enum Platform: String, Sendable {
            case ios
            case android
        }
        package var platform: Platform
        package var token: String?
        package init(platform: Platform, token: String?) {
            self.platform = platform
            self.token = token
        }
    }

    /// The name a peer gave in its `hello`, when it differs from the one `peer.found` carried:
    /// a v2 peer advertises no name, so this is the first time its name is known (after the
    /// handshake proved it a member of the event).
    package struct PeerNamed: Sendable, Equatable {
        package var peer: String
        package var name: String
        package init(peer: String, name: String) {
            self.peer = peer
            self.name = name
        }
    }

    /// One ranging round. `distance` is the raw reading, `filtered` what proximity decisions use,
    /// `rate` the filtered rate of change of the distance (m/s, negative while approaching).
    package struct Range: Sendable, Equatable {
        package var peer: String
        package var status: String
        package var distance: Double?
        package var filtered: Double?
        package var rate: Double?
        package var nlos: Bool?
        package var azimuth: Double?
        package var elevation: Double?
        /// The received level the board reported, dBm (nil: it reports none).
        package var rssi: Double?
        package init(
            peer: String, status: String, distance: Double?, filtered: Double?, rate: Double?, nlos: Bool?,
            azimuth: Double?, elevation: Double?, rssi: Double? = nil
        ) {
            self.rssi = rssi
            self.peer = peer
            self.status = status
            self.distance = distance
            self.filtered = filtered
            self.rate = rate
            self.nlos = nlos
            self.azimuth = azimuth
            self.elevation = elevation
        }
    }

    /// Entering (`near`) or leaving (`far`) the near zone.
    package struct Zone: Sendable, Equatable {
        package var peer: String
        package var distance: Double
        package var azimuth: Double?
        package init(peer: String, distance: Double, azimuth: Double?) {
            self.peer = peer
            self.distance = distance
            self.azimuth = azimuth
        }
    }

    /// A completed profile drop: both sides hold the other's card and the ack of their own.
    package struct Bump: Sendable, Equatable {
        package var peer: String
        package var bumpID: UInt32
        package var distance: Double?
        /// The peer's profile card: a JSON object, kept verbatim (`{}` for a phone, which sends none).
        package var cardJSON: String
        /// Set for a bump with a phone, which the rig decided alone (`"decided_by": "rig"`): a
        /// phone runs no profile drop, so nothing on its side confirms the bump.
        package var phone: Phone?
        package init(peer: String, bumpID: UInt32, distance: Double?, cardJSON: String, phone: Phone? = nil) {
            self.peer = peer
            self.bumpID = bumpID
            self.distance = distance
            self.cardJSON = cardJSON
            self.phone = phone
        }
    }

    /// The closest peer changed, or its distance band did ("getting warmer"). All fields are nil
    /// when no peer has a distance any more.
    package struct Nearest: Sendable, Equatable {
        package enum Band: String, Sendable {
            case immediate, near, medium, far
        }
        package var peer: String?
        package var distance: Double?
        package var band: Band?
        package init(peer: String?, distance: Double?, band: Band?) {
            self.peer = peer
            self.distance = distance
            self.band = band
        }
    }

    /// Rough proximity of a peer the ranging scheduler is not ranging with (more peers than the
    /// radio has sessions): from BLE signal strength only, so a band, never a distance.
    package struct Rough: Sendable, Equatable {
        package enum Band: String, Sendable {
            case near, medium, far
        }
        package var peer: String
        /// Smoothed RSSI of the peer's adverts, dBm.
        package var rssi: Int
        package var band: Band
        package init(peer: String, rssi: Int, band: Band) {
            self.peer = peer
            self.rssi = rssi
            self.band = band
        }
    }

    /// A node's load, written periodically while it has more peers than ranging sessions or had
    /// to drop something: what it tracks and ranges, and what it shed or evicted since the last one.
    package struct Stats: Sendable, Equatable {
        /// Peers tracked now.
        package var peers: Int
        /// Peers with a UWB session now.
        package var ranging: Int
        /// Ranging sessions the radio allows (its capabilities, or config).
        package var budget: Int
        /// `range` events not written since the last `stats` because stdout was too slow.
        package var shedRanges: Int
        /// Radio inputs (range notifications, adverts) dropped since the last `stats` because
        /// the node's input queue was full.
        package var shedInputs: Int
        /// Peers evicted (the least recently heard) since the last `stats` to stay within the cap.
        package var evicted: Int
        /// Rounds the board flagged OK with an impossible distance since the last `stats`.
        package var invalidReadings: Int
        /// The share of this rig's last 200 rounds that failed among sessions that work, in
        /// percent, and whether that says the air is full (it sheds far peers); nil until 200
        /// rounds were counted (`AirLoad`).
        package var air: Air?
        package struct Air: Sendable, Equatable {
            package var roundFailurePercent: Int
            package var full: Bool
            package init(roundFailurePercent: Int, full: Bool) {
                self.roundFailurePercent = roundFailurePercent
                self.full = full
            }
        }
        package init(
            peers: Int, ranging: Int, budget: Int, shedRanges: Int, shedInputs: Int, evicted: Int, invalidReadings: Int = 0, air: Air? = nil
        ) {
            self.invalidReadings = invalidReadings
            self.air = air
            self.peers = peers
            self.ranging = ranging
            self.budget = budget
            self.shedRanges = shedRanges
            self.shedInputs = shedInputs
            self.evicted = evicted
        }
    }

    package struct PeerLost: Sendable, Equatable {
        package enum Reason: String, Sendable {
            /// No advertisement or message for longer than the peer timeout.
            case timeout
            /// The peer said goodbye.
            case peerEnded = "peer-ended"
            /// Dropped to make room: the node tracks at most a configured number of peers.
            case evicted
        }
        package var peer: String
        package var reason: Reason
        package init(peer: String, reason: Reason) {
            self.peer = peer
            self.reason = reason
        }
    }
}
