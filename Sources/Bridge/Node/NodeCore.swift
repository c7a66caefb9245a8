import AndroidRangingOOB
import BLE
import CoreMetrics
import Events
import GATTServer
import NearbyInteractionAccessory
import Logging
import PeerProtocol
import PeerSecurity
import Proximity
import UCI
import UCIHost

/// A node's peer logic as one synchronous owner: `handle(input, now:) -> [NodeEffect]`.
///
/// It holds every peer in one map (`Peer`: machine, proximity, advertised facts, schedule,
/// routes), routes radio input to them (by link for peer messages, by UWB session and address for
/// ranges), schedules the radio's ranging sessions, and tracks the nearest peer. It performs no
/// I/O and never waits: what it wants done comes back as effects, which the node's runner
/// performs in order, feeding their immediate answers back in as inputs. The clock is the
/// caller's: `now` is the node's steady time in milliseconds (virtual in a simulation); wall time
/// only stamps events, in the runner.
///
/// A new kind of peer (a phone speaking another out-of-band protocol) plugs in here: its own
/// machine beside `PeerMachine` in `Peer`, fed by the same link and range routing.
struct NodeCore {
    /// What the core reads from outside, fixed for the node's life.
    struct Environment: Sendable {
        var identity: NodeIdentity
        var config: BridgeConfig
        var logger: Logger
        /// Each link's security: how a message becomes the bytes on the air.
        var channels: PeerChannels
        /// The range correction for the board the node has now (set when the board reports ready).
        var boardCorrection: BoardCorrection
        /// Range events the event stream shed and radio inputs the inbox dropped, since last asked.
        var takeShed: @Sendable () -> (ranges: Int, inputs: Int)
    }

    let environment: Environment
    var identity: NodeIdentity { environment.identity }
    /// The `node` of every event, rendered once: building it per range event cost an allocation.
    let tag: String
    var config: BridgeConfig { environment.config }
    var logger: Logger { environment.logger }
    private var channels: PeerChannels { environment.channels }

    var peers: [PeerID: Peer] = [:]
    /// Indexes into `peers`, kept in step with each peer's `links` and `route`.
    private var peerByLink: [LinkID: PeerID] = [:]
    private var peerByRoute: [UWBRoute: PeerID] = [:]
    /// Links a peer opened to us, with when and from where, until their first message (a `hello`;
    /// on a v2 link after the handshake) names the peer. Bounded in number and time (`admitIncoming`).
    private var linksAwaitingHello: [LinkID: (since: Int64, address: BLEAddress)] = [:]
    private var handshakeAdmission: HandshakeAdmission
    private var departedAdverts = DepartedAdverts()
    /// Peer-channel links the core holds open now, for `nearby_ble_links`: ours, and those opened
    /// to us that were admitted. A link leaves when it closes or when the core closes it: an
    /// adapter reports no `linkClosed` for a link closed on our side.
    private(set) var openLinks: Set<LinkID> = []
    /// With an event key: reads other rigs' private adverts.
    private let privateAdverts: PrivateAdvert?
    /// With an event key: drops private adverts replayed from another radio.
    private var addressBinding: AddressBinding?
    /// Peers and adverts we ignore, each logged once: v1 rigs (without `allowInsecurePeers`),
    /// rigs of a secured event when we have no key.
    private var ignoredOnce: Set<String> = []
    var random: SplitMix64
    /// The closest peer, and what the last `nearest` event said. Ranges update it as they come;
    /// ticks report it, so the ranges of one round (one peer after another) make one event.
    var nearest: NearestTracker
    var reportedNearest: NearestTracker.Nearest?
    /// The range batch being handled, sorted out by peer (kept between batches, emptied).
    var batch = RangeBatch()
    private var contacts: [(PeerID, Double)] = []
    var scheduler: RangingScheduler
    /// The share of this rig's rounds that failed: when the air is full, far peers are shed.
    var airLoad = AirLoad()
    /// The board as it last came up: whether it runs provisioned STS.
    private var board: BoardDescription?
    /// Phones served as Nearby Interaction accessories (`NodeCore+Phones`), by the GATT client
    /// they write from and the board session they range in; ACTIVE notifications that came
    /// before their session's start was reported (at most a few, only while a phone's starts).
    var phones: [PeerID: PhonePeer] = [:]
    var phoneByClient: [GATTClient: PeerID] = [:]
    var phoneByToken: [UInt32: PeerID] = [:]
    var earlyActive: [UInt32] = []
    /// What a phone's accessory session offers and checks: this board's channels and preamble
    /// codes (channel 9 alone until the board has said) and the rig's UWB address.
    var phoneSettings: AccessorySessionSettings
    /// What an Android phone's OOB responder offers and checks: the same board's channels among
    /// Android's, the same address (little-endian, as UCI carries DEVICE_MAC_ADDRESS).
    var androidSettings: AndroidOOBResponderSettings
    var evicted = 0
    /// Rounds flagged OK with an impossible distance since the last `stats`.
    var invalidReadings = 0
    /// Whether the board reads short beyond what its correction explains, or reports no level.
    private var calibrationWatch = CalibrationWatch()
    private var levelWatch = LevelWatch()
    var lastStatsAt: Int64

    /// The input being handled: its time, and what it asks for so far.
    var now: Int64
    var effects: [NodeEffect] = []
    var events: [Event] = []
    /// The storage of the effects the runner handed back (`recycle`): the next input's effects
    /// go into it, so an input costs no allocation for its list of effects.
    private var spareEffects: [NodeEffect] = []

    init(environment: Environment, seed: UInt64, now: Int64) {
        self.environment = environment
        self.tag = environment.identity.tag
        self.random = SplitMix64(seed: seed)
        self.privateAdverts = environment.config.security.groupKey.map(PrivateAdvert.init)
        self.addressBinding = environment.config.security.groupKey.map(AddressBinding.init)
        self.nearest = NearestTracker(config: environment.config.proximity)
        self.scheduler = RangingScheduler(budget: environment.config.rangingSessions ?? BridgeConfig.defaultRangingSessions)
        if environment.config.controleesPerSession > 1 { scheduler.controleesPerSession = environment.config.controleesPerSession }
        self.handshakeAdmission = HandshakeAdmission(perSecond: Self.strangersAdmittedPerSecond, burst: Self.strangersAdmittedAtOnce, now: now)
        self.lastStatsAt = now
        self.now = now
        self.phoneSettings = AccessorySessionSettings(
            capabilities: AccessoryCapabilities(channels: AccessoryCapabilities.fallbackChannels),
            shortAddress: environment.identity.uwbShortAddress, octetOrder: environment.config.phoneOctetOrder)
        let address = environment.identity.uwbShortAddress
        self.androidSettings = AndroidOOBResponderSettings(
            board: AndroidBoardCapabilities(capabilities: [], uciMajor: 1), shortAddress: [UInt8(address & 0xFF), UInt8(address >> 8)])
    }

    /// Handles one input at `now` and returns what it asks for, in order: its events first, then
    /// the radio effects.
    mutating func handle(_ input: NodeInput, now: Int64) -> [NodeEffect] {
        self.now = now
        switch input {
        case .ble(let event): handle(event)
        case .gatt(let event): handle(event)
        case .ranges(let rounds): handle(rounds)
        case .uwb(.notification(let notification)): handle(notification)
        case .uwb(.closed): boardLost()
        case .uwbSessions(let event): handle(event)
        case .uwbReattached: break  // the node brings the board up; `boardReady` follows
        case .tick: tick()
        case .stop:
            for peer in peers.keys.sorted() { feed(peer, .close(sayGoodbye: true)) }
            stopPhones()
        case .connectStarted(let peer, let link): feed(peer, .connectStarted(link))
        case .connectFailed(let peer, let error):
            Self.countConnectFailure(node: identity.peerID)
            feed(peer, .connectFailed(error))
        case .sharedPlaceReserved(let peer, let parameters): feed(peer, .sharedPlaceReserved(parameters))
        }
        var out = spareEffects
        spareEffects = []
        if !events.isEmpty {
            out.append(.emit(events))
            events = []
        }
        out.append(contentsOf: effects)
        effects.removeAll(keepingCapacity: true)
        return out
    }

    /// Takes back the effects `handle` returned once they are performed, for their storage and
    /// that of the events they emitted: the next input's events go into it, so a range
    /// notification's events cost no allocation.
    mutating func recycle(_ performed: consuming [NodeEffect]) {
        var storage = performed
        // `handle` puts the events first.
        var emitted: [Event] = []
        if case .emit(let batch)? = storage.first { emitted = batch }
        storage.removeAll(keepingCapacity: true)
        if storage.capacity > spareEffects.capacity { spareEffects = storage }
        // The batch is this array's alone now: the sinks render it and keep nothing (one that
        // kept it would make this a copy, not a fault).
        emitted.removeAll(keepingCapacity: true)
        if events.isEmpty, emitted.capacity > events.capacity { events = emitted }
    }

    /// Ranging sessions the radio allows: as many as the board says it runs at once, unless the
    /// config names a number. Also called before the node's loop starts, for the first board.
    mutating func learn(_ board: BoardDescription) {
        self.board = board
        phoneSettings.capabilities = AccessoryCapabilities(capabilities: board.capabilities, uciMajor: board.info.uciVersion.major)
        androidSettings.board = AndroidBoardCapabilities(capabilities: board.capabilities, uciMajor: board.info.uciVersion.major)
        guard config.rangingSessions == nil else { return }
        scheduler.budget = max(1, board.maxRangingSessions ?? BridgeConfig.defaultRangingSessions)
    }

    // MARK: Peers

    /// Hands `input` to the peer's machine and applies what it answers: its radio effects become
    /// the core's, the rest (routes, events, removal) is applied here. Returns its report, if the
    /// input was a tick.
    @discardableResult
    private mutating func feed(_ id: PeerID, _ input: PeerInput) -> SessionReport? {
        guard let index = peers.index(forKey: id) else { return nil }
        let actions = peers.values[index].machine.receive(input, now: now)
        var report: SessionReport?
        var ended: Event.PeerLost.Reason?
        for action in actions {
            switch action {
            case .send(let message, let link):
                guard let frame = channels.frame(message, on: link) else {
                    logger.debug("send on a closed link", metadata: ["peer": "\(id)", "link": "\(link)"])
                    continue
                }
                effects.append(.send(frame, on: link))
            case .connect(let address): effects.append(.connect(address, for: id))
            case .disconnect(let link): disconnect(link)
            case .openUWB(let request): effects.append(.openUWB(request, for: id))
            case .closeUWB: effects.append(.closeUWB(id))
            case .reserveSharedPlace(let controlee): effects.append(.reserveSharedPlace(controlee: controlee, for: id))
            case .log(let level, let message, var metadata):
                metadata["peer"] = "\(id)"
                logger.log(level: level, "\(message)", metadata: metadata)
            case .emit(let body): events.append(Event(node: tag, body: body))
            case .bindLink(let link):
                peerByLink[link] = id
                inPlace(id) { $0.links.insert(link) }
            case .unbindLink(let link):
                if peerByLink[link] == id { peerByLink[link] = nil }
                inPlace(id) { $0.links.remove(link) }
            case .route(let route): setRoute(route, of: id)
            case .consumeContact: inPlace(id) { $0.proximity.processor.consumeContact() }
            case .report(let r): report = r
            case .end(let reason): ended = reason
            }
        }
        if let ended { remove(id, reason: ended) }
        return report
    }

    private mutating func view(of peer: PeerID) -> ProximityView {
        inPlace(peer) { $0.proximity.view } ?? ProximityView()
    }

    /// Creates the peer (and reports it found) on first contact. A new peer gets a ranging session
    /// at once if one is free; at the peer cap another peer is evicted first.
    private mutating func peerFor(
        _ id: PeerID, name: String?, rssi: Int?, version: PeerMessage.Version = .v1, capabilities: Advertisement.Capabilities = []
    ) {
        let now = self.now
        guard inPlace(id, { $0.lastHeard = now }) == nil else { return }
        if peers.count >= config.maxPeers { evictOne() }
        var demand = grantedDemand()
        demand.add(sharing: sharesSession(id, capabilities: capabilities), place: nil)
        let grant = scheduler.sessionsNeeded(demand) <= rigSessions
        let machine = PeerMachine(
            peer: id, name: name ?? "", identity: identity, config: config, boardRunsProvisionedSTS: board?.supportsProvisionedSTS ?? false,
            boardHopsRounds: config.uwb.hopsRounds && board?.supportsRoundHopping ?? false, seed: random.next(), granted: grant, now: now)
        peers[id] = Peer(
            machine: machine, proximity: PeerProximity(processor: RangeProcessor(peer: id.description, config: config)),
            version: version, capabilities: capabilities, since: now, lastHeard: now)
        events.append(Event(node: tag, body: .peerFound(.init(peer: id.description, name: name ?? "", rssi: rssi))))
    }

    /// Drops the least recently heard peer, preferring one without a ranging session.
    private mutating func evictOne() {
        let victim = peers.min { a, b in
            (a.value.granted ? 1 : 0, a.value.lastHeard, a.key) < (b.value.granted ? 1 : 0, b.value.lastHeard, b.key)
        }
        guard let victim else { return }
        evicted += 1
        remove(victim.key, reason: .evicted)
    }

    /// Whether this peer, once granted, ranges in a one-to-many session we control.
    mutating func sharesSession(_ peer: PeerID, capabilities: Advertisement.Capabilities? = nil) -> Bool {
        config.controleesPerSession > 1 && identity.peerID < peer
            && (capabilities ?? inPlace(peer, { $0.capabilities }) ?? []).contains(.oneToMany)
    }

    private mutating func setRoute(_ route: UWBRoute?, of peer: PeerID) {
        if let old = inPlace(peer, { $0.route }) ?? nil, peerByRoute[old] == peer { peerByRoute[old] = nil }
        inPlace(peer) { $0.route = route }
        if let route { peerByRoute[route] = peer }
    }

    private mutating func remove(_ id: PeerID, reason: Event.PeerLost.Reason) {
        guard knows(id) else { return }
        feed(id, .close(sayGoodbye: false))
        guard let peer = peers.removeValue(forKey: id) else { return }
        for link in peer.links where peerByLink[link] == id { peerByLink[link] = nil }
        if let route = peer.route, peerByRoute[route] == id { peerByRoute[route] = nil }
        events.append(Event(node: tag, body: .peerLost(.init(peer: id.description, reason: reason))))
        nearest.remove(peer: id.rawValue, now: now)
    }

    mutating func ignoreOnce(_ key: String, _ message: String, _ metadata: Logger.Metadata) {
        guard ignoredOnce.count < 4096, ignoredOnce.insert(key).inserted else { return }
        logger.notice("\(message)", metadata: metadata)
    }

    /// For whatever metrics backend the process set up (`--http`'s `/metrics`; none: no-ops),
    /// per node (a demo or a world runs several in one process).
    private static func countLinks(_ open: Int, node: PeerID) {
        Gauge(label: "nearby_ble_links", dimensions: [("node", node.description)]).record(open)
    }

    private static func countConnectFailure(node: PeerID) {
        Counter(label: "nearby_ble_connect_failures_total", dimensions: [("node", node.description)]).increment()
    }

    // MARK: Bluetooth

    private mutating func handle(_ event: BLEEvent) {
        switch event {
        case .advertisement(let address, let rssi, let data):
            advertisement(from: address, rssi: rssi, data: data)
        case .linkOpened(let link, let address, let initiatedLocally):
            departedAdverts.opened(address)
            guard initiatedLocally else { return admitIncoming(link, from: address) }
            // A link we gave up on (connect timeout) that opened after all has no peer: close it.
            guard let peer = peerByLink[link] else { return disconnect(link) }
            opened(link)
            let version = inPlace(peer) { $0.version } ?? .v1
            if let handshake = channels.openOutgoing(link, peerVersion: version, now: now) {
                effects.append(.send(handshake, on: link))  // the link is the peer's once the handshake completes
                feed(peer, .handshakeStarted(link))
            } else {
                feed(peer, .outgoingLinkOpened(link, rangingSecret: nil))
            }
        case .linkData(let link, let sdu):
            linkData(sdu, on: link)
        case .linkClosed(let link):
            if openLinks.remove(link) == nil, peerByLink[link] != nil {
                Self.countConnectFailure(node: identity.peerID)  // our attempt closed before it opened
            }
            Self.countLinks(openLinks.count, node: identity.peerID)
            linksAwaitingHello[link] = nil
            channels.close(link)
            guard let peer = peerByLink.removeValue(forKey: link) else { return }
            inPlace(peer) { $0.links.remove(link) }
            feed(peer, .linkClosed(link))
        case .connectRefused(let link):
            guard let peer = peerByLink[link], let address = inPlace(peer, { $0.machine.attemptAddress(of: link) }) ?? nil else { return }
            logger.info(
                "channel refused: no bridge listens at that address now; its adverts no longer count as the peer",
                metadata: ["peer": "\(peer)", "address": "\(address)"])
            departedAdverts.refused(address, peer: peer, now: now)
            feed(peer, .refused(link))  // the `.linkClosed` that follows finds the link ended
        case .adapterPowered:
            break  // the node reports it; the links that went with the power close on their own
        }
    }

    private mutating func advertisement(from address: BLEAddress, rssi: Int, data: [UInt8]) {
        guard let (advert, version) = readAdvert(from: address, data), advert.peerID != identity.peerID else { return }
        guard version == .v1 || addressBinding?.admits(advert, from: address) != false else {
            return ignoreOnce(
                "unbound:\(advert.peerID)", "ignoring a rig's private advert heard from an address its radio does not send from (a replay)",
                ["peer": "\(advert.peerID)", "address": "\(address)"])
        }
        if departedAdverts.isDeparted(address, peer: advert.peerID, now: now), !knows(advert.peerID) { return }
        let name = AdvertisingData(data).localName
        inPlace(advert.peerID) { ($0.version, $0.capabilities) = (version, advert.capabilities) }
        peerFor(advert.peerID, name: name, rssi: rssi, version: version, capabilities: advert.capabilities)
        feed(advert.peerID, .heard(advert, name: name, address: address, rssi: rssi))
    }

    /// A peer's advert in the version this node speaks with it: private (v2) with our event
    /// key, v1 with our group otherwise; v1 peers are ignored by a keyed node unless allowed.
    private mutating func readAdvert(from address: BLEAddress, _ data: [UInt8]) -> (Advertisement, PeerMessage.Version)? {
        let security = config.security
        if let privateAdverts {
            if let advert = privateAdverts.open(data) { return (advert, .v2) }
        } else if PrivateAdvert.isPresent(in: data) {
            ignoreOnce(
                "v2:\(address)", "ignoring a rig of a secured event: this rig has no event key (groupKey in the config)",
                ["address": "\(address)"])
            return nil
        }
        let advert: Advertisement?
        do {
            advert = try Advertisement.find(in: data)
        } catch {
            logger.debug("malformed advertisement", metadata: ["from": "\(address)", "error": "\(error)"])
            return nil
        }
        guard let advert, advert.group == identity.group else { return nil }
        guard security.groupKey == nil || security.allowInsecurePeers else {
            ignoreOnce(
                "v1:\(advert.peerID)",
                "ignoring a v1 (unencrypted) peer; set \"allowInsecurePeers\": true to range with it",
                ["peer": "\(advert.peerID)"])
            return nil
        }
        return (advert, .v1)
    }

    private mutating func linkData(_ sdu: [UInt8], on link: LinkID) {
        // Only a link the core holds is read. One it refused or closed may still bring frames (the
        // adapter reads until the close takes effect, and reports no close of its own), and
        // reading one would cost a handshake and keep its state: a replayed message 1 on each of
        // 10 000 links a second refused at admission took a rig to 70 % of a core and 2 MB more
        // memory a second.
        guard linksAwaitingHello[link] != nil || peerByLink[link] != nil else { return }
        let message: PeerMessage
        switch channels.receive(sdu, on: link) {
        case .message(let received): message = received
        case .reply(let frame): return effects.append(.send(frame, on: link))
        case .established:
            guard let peer = peerByLink[link] else { return drop(link, because: "handshake on an unknown link") }
            feed(peer, .outgoingLinkOpened(link, rangingSecret: channels.rangingSecret(link)))
            return
        case .refused(let reason): return drop(link, because: reason)
        case .discarded(let reason):
            ignoreOnce(
                "discarded:\(link)", "discarding peer-channel frames that do not authenticate (altered, cut short or replayed on the air)",
                ["link": "\(link)", "peer": "\(peerByLink[link].map { "\($0)" } ?? "-")", "first": "\(reason)"])
            return
        }
        if linksAwaitingHello[link] != nil {
            guard case .hello(let hello) = message else { return drop(link, because: "first message was not hello") }
            let secret = channels.rangingSecret(link)
            // v1 names its group in the hello; on a v2 link the handshake proved membership.
            guard secret != nil || hello.group == identity.group, hello.peerID < identity.peerID else {
                return drop(link, because: "hello from \(hello.peerID) breaks group or role rules")
            }
            if let address = linksAwaitingHello.removeValue(forKey: link)?.address { handshakeAdmission.trust(address, now: now) }
            peerFor(hello.peerID, name: hello.name, rssi: nil)
            feed(hello.peerID, .incomingHello(link, hello, retryAfter: retryAfter, rangingSecret: secret))
            return
        }
        guard let peer = peerByLink[link] else { return drop(link, because: "message on an unknown link") }
        feed(peer, .message(message, on: link, view(of: peer)))
    }

    /// How long a link opened to us may go without its `hello`: an honest peer's handshake and
    /// hello take a few round trips, repeated every `retransmit` when frames are lost.
    static let helloTimeoutMilliseconds: Int64 = 5_000

    /// How many links opened to us may wait for their `hello` at once: as many as strangers may
    /// open at once, or a few per ranging session if that is more. Below the burst, links admitted
    /// together would push each other out before their handshakes ended (a crowd of 1 000 peers
    /// arriving together lost a bump that way).
    private var awaitingHelloLimit: Int { max(Self.strangersAdmittedAtOnce, 4 * scheduler.budget) }

    /// New links from addresses not proven lately that may go on to a handshake: per second, and
    /// at once after a quiet while (a hall's rigs all coming in together at the start).
    static let strangersAdmittedPerSecond = 64
    static let strangersAdmittedAtOnce = 128

    /// A link a peer opened to us waits for its `hello`, within limits (issue 35): links from
    /// strangers come in at `strangersAdmittedPerSecond` (`HandshakeAdmission`), and a flood of
    /// connections that stay silent, fail the handshake or replay one holds at most
    /// `awaitingHelloLimit` links, each at most `helloTimeoutMilliseconds`. At the limit the
    /// link that waited longest goes: an honest peer's new link always gets its turn. Links from an
    /// address whose last link failed before its `hello` (no `hello` in time, or pushed out at the
    /// limit) are closed at once while it is backed off, before they take an admission.
    private mutating func admitIncoming(_ link: LinkID, from address: BLEAddress) {
        switch handshakeAdmission.admit(address, now: now) {
        case .admitted: break
        case .backedOff: return closeUnnamed(link)
        case .overRate:
            ignoreOnce(
                "admission", "more new links than a rig takes from strangers (a connection flood?): closing them before any handshake",
                ["per second": "\(Self.strangersAdmittedPerSecond)"])
            return closeUnnamed(link)
        }
        if linksAwaitingHello.count >= awaitingHelloLimit,
            let oldest = linksAwaitingHello.min(by: { ($0.value.since, $0.key) < ($1.value.since, $1.key) })
        {
            ignoreOnce(
                "awaiting-hello-limit", "too many links waiting for their hello (a connection flood?): closing the one that waited longest",
                ["limit": "\(awaitingHelloLimit)"])
            handshakeAdmission.failed(oldest.value.address, now: now)
            closeUnnamed(oldest.key)
        }
        linksAwaitingHello[link] = (now, address)
        opened(link)
    }

    /// Closes the links opened to us that went without a `hello` for too long.
    private mutating func expireLinksAwaitingHello() {
        let expired = linksAwaitingHello.filter { now - $0.value.since >= Self.helloTimeoutMilliseconds }.sorted { $0.key < $1.key }
        for (link, waiting) in expired {
            logger.debug("closing link", metadata: ["link": "\(link)", "reason": "no hello within \(Self.helloTimeoutMilliseconds) ms"])
            handshakeAdmission.failed(waiting.address, now: now)
            closeUnnamed(link)
        }
    }

    /// Closes a link no peer owns yet, without a warning each (a flood would write thousands).
    private mutating func closeUnnamed(_ link: LinkID) {
        linksAwaitingHello[link] = nil
        disconnect(link)
    }

    /// A link we hold opened: one we asked for, or one opened to us that was admitted.
    private mutating func opened(_ link: LinkID) {
        openLinks.insert(link)
        Self.countLinks(openLinks.count, node: identity.peerID)
    }

    /// Closes a link and forgets it here at once: no `linkClosed` follows a close on our side.
    /// The frame sent last on it (a goodbye, a `busy`) is already made.
    private mutating func disconnect(_ link: LinkID) {
        if openLinks.remove(link) != nil { Self.countLinks(openLinks.count, node: identity.peerID) }
        channels.close(link)
        effects.append(.disconnect(link))
    }

    /// Closes a link whose peer broke the protocol before any machine owned it.
    /// A link opened to us that breaks it before its `hello` backs its address off.
    private mutating func drop(_ link: LinkID, because reason: String) {
        var metadata: Logger.Metadata = ["link": "\(link)", "reason": "\(reason)"]
        var level = Logger.Level.warning
        if let address = linksAwaitingHello.removeValue(forKey: link)?.address {
            let backOff = handshakeAdmission.failed(address, now: now)
            metadata["address"] = "\(address)"
            metadata["backed off for ms"] = "\(backOff)"
            // Its first failure in a while is worth a warning; a keyless peer that keeps trying is not.
            if backOff > HandshakeAdmission.firstBackOffMilliseconds { level = .debug }
        }
        logger.log(level: level, "closing link", metadata: metadata)
        channels.close(link)
        if let peer = peerByLink[link] {
            feed(peer, .refused(link))
            peerByLink[link] = nil
            inPlace(peer) { $0.links.remove(link) }
        }
        disconnect(link)
    }

    // MARK: UWB

    /// Range notifications in arrival order: each measurement goes to its peer by session and
    /// address; each peer's readings run in order, peers in the order their first reading came,
    /// and all their events go out together. Machines hear only of contacts.
    private mutating func handle(_ rounds: [RangeData]) {
        batch.removeAll()
        contacts.removeAll(keepingCapacity: true)
        for (roundIndex, round) in rounds.enumerated() {
            for (measurementIndex, measurement) in round.measurements.enumerated() {
                guard case .short(let address) = measurement.address else { continue }
                let route = UWBRoute(token: round.session, peerAddress: address)
                guard let peer = peerByRoute[route] ?? (phoneByToken.isEmpty ? nil : phone(for: route)) else { continue }
                batch.add(.init(round: roundIndex, measurement: measurementIndex), of: peer)
                countAirRound(with: peer, status: measurement.status)
            }
        }
        batch.sort()
        let correction = environment.boardCorrection.correction
        events.reserveCapacity(events.count + batch.count)
        for slot in batch.peers.indices {
            let peer = batch.peers[slot]
            // Updated where it lies in the dictionary: one lookup, no copy of the peer's state.
            guard let index = peers.index(forKey: peer) else {
                processPhone(peer, readings: batch.readings(ofPeerAt: slot), of: rounds, correction: correction)
                continue
            }
            peers.values[index].proximity.processor.correction = correction
            for reading in batch.readings(ofPeerAt: slot) {
                let round = rounds[reading.round]
                let outcome = peers.values[index].proximity.processor.process(round.measurements[reading.measurement], of: round, hostTime: now)
                if outcome.measured { peers.values[index].proximity.lastMeasuredAt = now }
                record(outcome, of: peer)
            }
            let filtered = inPlace(at: index) { $0.proximity.processor.proximity.filtered }
            nearest.update(peer: peer.rawValue, distance: filtered, time: now)
        }
        for (peer, distance) in contacts {
            if phones[peer] != nil { phoneContact(peer, distance: distance) } else { feed(peer, .contact(distance: distance)) }
        }
    }

    /// What one of a peer's readings came to (corrected for the board as of its batch): its
    /// `range`, `near` and `far` events, its contact, the board's calibration and level watches.
    mutating func record(_ outcome: RangeProcessor.Outcome, of peer: PeerID) {
        if let corrected = outcome.corrected, outcome.range.nlos != true, calibrationWatch.add(corrected: corrected) {
            logger.warning(
                "the UWB board reads short: \(calibrationWatch.belowContact) of \(calibrationWatch.closeReadings) readings closer than 30 cm were below -8 cm after correction; it looks uncalibrated (run `nearby-bridge calibrate`)")
        }
        if outcome.corrected != nil, levelWatch.add(hasLevel: outcome.range.rssi != nil) {
            logger.warning(
                "the UWB board reports no RSSI (\(LevelWatch.readingsBeforeWarning) rounds in a row): no bias correction, bumps decided from distance alone, so hand-overs 15–25 cm apart may bump; use firmware that honours RSSI_REPORTING (UCI 2.0: UCI 1.1 range data has no RSSI; firmware-notes/rssi.md)")
        }
        if outcome.invalid { invalidReadings += 1 }
        let node = tag
        events.append(Event(node: node, body: .range(outcome.range)))
        for change in outcome.changes {
            switch change {
            case .near(let d): events.append(Event(node: node, body: .near(.init(peer: outcome.range.peer, distance: d, azimuth: outcome.azimuth))))
            case .far(let d): events.append(Event(node: node, body: .far(.init(peer: outcome.range.peer, distance: d, azimuth: outcome.azimuth))))
            case .contact(let d): contacts.append((peer, d))
            }
        }
    }

    private mutating func handle(_ notification: UCINotification) {
        if case .sessionStatus(let token, let state, let reason) = notification, !phones.isEmpty {
            phoneSessionStatus(token: token, state: state, reason: reason)
        }
        switch notification {
        case .rangeData(let round):
            handle([round])
        case .sessionStatus(let token, let state, let reason)
        where (state == .deinitialized || state == .idle) && reason != .stateChangeWithSessionManagementCommands:
            for peer in peerByRoute.filter({ $0.key.token == token }).values.sorted() {
                feed(peer, .uwbSessionEnded(reason))
            }
        case .sessionStatus, .deviceStatus, .genericError, .multicastListUpdate:
            break
        }
    }

    /// The board's session manager reported how a peer's request went, or that the board is up.
    private mutating func handle(_ event: UWBSessionsEvent) {
        switch event {
        case .started(let peer, let sessionID, let token) where phones[peer] != nil:
            phoneSessionOpened(peer, sessionID: sessionID, token: token, status: .ok)
        case .failed(let peer, let sessionID, let error) where phones[peer] != nil:
            logger.notice("a phone's UWB session did not start", metadata: ["peer": "\(peer)", "error": "\(error)"])
            let status: StatusCode = if case .commandFailed(_, let status) = error { status } else { .failed }
            phoneSessionOpened(peer, sessionID: sessionID, token: nil, status: status)
        case .started(let peer, let sessionID, let token): feed(peer, .uwbStarted(sessionID: sessionID, token: token))
        case .failed(let peer, let sessionID, let error): feed(peer, .uwbFailed(sessionID: sessionID, error: "\(error)"))
        case .boardReady(let board):
            // Back after it went away: restart the sessions of peers we were ranging with.
            learn(board)
            for peer in peers.keys.sorted() { feed(peer, .uwbBack) }
        case .boardFailed, .boardUnresponsive: break  // the node's
        }
    }

    /// The UWB board went away: every session on it is gone, but the peers stay.
    private mutating func boardLost() {
        effects.append(.forgetBoardSessions)
        for peer in peers.keys.sorted() { feed(peer, .uwbLost) }
        phonesLostBoard()
    }

    // MARK: Time

    /// How long a peer we turn away should wait: about as long as the peers waiting before it.
    private var retryAfter: Int64 {
        scheduler.retryAfter(waiting: max(0, peers.count - scheduler.budget))
    }

    private mutating func tick() {
        expireLinksAwaitingHello()
        for (link, frame) in channels.repeats(now: now, interval: config.retransmitMilliseconds) {
            effects.append(.send(frame, on: link))
        }
        var reports: [(PeerID, SessionReport)] = []
        reports.reserveCapacity(peers.count)
        for peer in peers.keys.sorted() {
            guard let report = feed(peer, .tick(view(of: peer))) else { continue }
            if report.timedOut {
                remove(peer, reason: .timeout)
            } else {
                inPlace(peer) { ($0.lastHeard, $0.sharedPlace) = (report.lastHeard, report.sharedSession) }
                reports.append((peer, report))
            }
        }
        nearest.expire(now: now)
        reportNearest()
        schedule(reports)
        if airLoad.hasWindow { Self.reportAir(failureShare: airLoad.failureShare, full: airLoad.isFull, node: identity.peerID) }
        tickPhones()
        reportStats(ranging: reports.count { $0.1.isRanging })
    }

    /// Gives the radio's sessions to the peers the scheduler picks: takes them from peers that
    /// had their turn, and hands them to the next ones.
    private mutating func schedule(_ reports: [(PeerID, SessionReport)]) {
        let now = self.now
        var candidates: [RangingScheduler.Candidate] = []
        candidates.reserveCapacity(reports.count)
        for (peer, report) in reports {
            let (granted, since) = inPlace(peer) { ($0.granted, $0.since) } ?? (false, now)
            candidates.append(
                RangingScheduler.Candidate(
                    peer: peer, granted: granted, since: since, holdsPriority: report.holdsPriority, rssi: report.rssi,
                    available: report.available, sharesSession: sharesSession(peer), sharedSession: report.sharedSession))
        }
        var rigs = scheduler
        rigs.budget = rigSessions
        rigs.shedsFarPeers = airLoad.isFull && config.shedsFarPeersWhenAirIsFull
        let chosen = rigs.choose(candidates, now: now)
        let granted = Set(grantedPeers().map(\.peer))
        guard chosen != granted else { return }
        let retryAfter = self.retryAfter
        for peer in granted.subtracting(chosen).sorted() {
            inPlace(peer) { $0.since = now }
            feed(peer, .revoked(retryAfter: retryAfter))
        }
        for peer in chosen.subtracting(granted).sorted() {
            inPlace(peer) { $0.since = now }
            feed(peer, .granted)
        }
    }
}
