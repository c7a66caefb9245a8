import BLE
import CoreMetrics
import Events
import Logging
import PeerProtocol
import PeerSecurity
import Proximity
import UCI
import UCIHost

/// One peer's proximity: readings -> filter -> `range`, `near`, `far` events and contacts. The
/// registry owns it and runs every reading of a radio read through it without hopping onto the
/// peer's actor: at hundreds of peers that hop cost more than the work itself (docs/PERFORMANCE.md).
/// Sessions see it as a `ProximityView` with each input that needs it.
struct PeerProximity {
    var processor: RangeProcessor
    var lastMeasuredAt: Int64?

    var view: ProximityView {
        ProximityView(
            contactArmed: processor.proximity.contactArmed, filtered: processor.proximity.filtered,
            isNear: processor.proximity.isNear, lastMeasuredAt: lastMeasuredAt)
    }
}

/// Where a node's events go: stamped with the node's tag and one time per batch.
struct NodeEmitter: Sendable {
    /// The node's tag, the `node` of every event it emits.
    let node: String
    let emitEvents: @Sendable ([Event]) -> Void
    /// Range events the event stream shed and radio inputs the inbox dropped, since last asked.
    let takeShed: @Sendable () -> (ranges: Int, inputs: Int)

    func emit(_ body: Event.Body) { emitEvents([Event(node: node, body: body)]) }
    /// Events built with `node` already (the range path, which would otherwise wrap each body).
    func emit(_ events: [Event]) { if !events.isEmpty { emitEvents(events) } }
}

/// The dictionary of per-peer session actors, and the one owner of what routes radio input to
/// them: by link (peer messages), by UWB session and address (ranges), links still waiting for
/// `hello`. Sessions never hand state back; they answer each input with outputs (`PeerAction`)
/// that the registry applies in order: routes, events, removal.
///
/// Not an actor: the node's loop owns it (`BridgeNode.run`) and is its only caller, so it needs no
/// isolation of its own, and handing it a batch is a call rather than a job on the loop.
final class PeerRegistry {
    private let context: PeerContext
    private let events: NodeEmitter
    private var sessions: [PeerID: PeerSession] = [:]
    private var proximity: [PeerID: PeerProximity] = [:]
    private var peerByLink: [LinkID: PeerID] = [:]
    private var peerByRoute: [UWBRoute: PeerID] = [:]
    private var routeByPeer: [PeerID: UWBRoute] = [:]
    private var linksAwaitingHello: Set<LinkID> = []
    /// What each peer's adverts say: the protocol version it speaks and its capabilities.
    private var advertised: [PeerID: (version: PeerMessage.Version, capabilities: Advertisement.Capabilities)] = [:]
    /// With an event key: reads other rigs' private adverts.
    private let privateAdverts: PrivateAdvert?
    /// Peers and adverts we ignore, each logged once: v1 rigs (without `allowInsecurePeers`),
    /// rigs of a secured event when we have no key.
    private var ignoredOnce: Set<String> = []
    /// Peer-channel links open now, for `nearby_ble_links` (and to tell a link that closed from a
    /// connection attempt that failed).
    private var openLinks: Set<LinkID> = []
    private var random: SplitMix64
    /// The closest peer across all sessions, and what the last `nearest` event said. Ranges
    /// update it as they come; ticks report it, so the ranges of one round (one peer after
    /// another) make one event rather than a burst.
    private var nearest: NearestTracker<PeerID>
    private var reportedNearest: NearestTracker<PeerID>.Nearest?
    /// A range batch's readings with their peers, and the peers in order of first reading: kept
    /// between batches (emptied), so the range path allocates nothing to sort a batch out.
    private var batchReadings: [(peer: PeerID, reading: RangeReading)] = []
    private var batchPeers: [PeerID] = []
    /// Who holds one of the radio's ranging sessions, and the facts the scheduler weighs.
    private var scheduler: RangingScheduler
    private var granted: Set<PeerID> = []
    /// Granted peers: when the grant started; others: since when they wait.
    private var since: [PeerID: Int64] = [:]
    /// The one-to-many session each peer we control has a place in, as of the last tick.
    private var sharedPlace: [PeerID: UInt32] = [:]
    /// When each peer was last heard, as of the last tick or its discovery: for eviction.
    private var lastHeard: [PeerID: Int64] = [:]
    private var evicted = 0
    /// Rounds flagged OK with an impossible distance since the last `stats`.
    private var invalidReadings = 0
    /// Whether the board reads short beyond what its correction explains.
    private var calibrationWatch = CalibrationWatch()
    private var levelWatch = LevelWatch()
    private var lastStatsAt: Int64

    init(context: PeerContext, events: NodeEmitter, seed: UInt64) {
        self.context = context
        self.events = events
        self.random = SplitMix64(seed: seed)
        self.privateAdverts = context.config.security.groupKey.map(PrivateAdvert.init)
        self.nearest = NearestTracker(config: context.config.proximity)
        self.scheduler = RangingScheduler(budget: context.config.rangingSessions ?? BridgeConfig.defaultRangingSessions)
        if context.config.controleesPerSession > 1 { scheduler.controleesPerSession = context.config.controleesPerSession }
        self.lastStatsAt = context.time.nowMilliseconds()
    }

    var peerCount: Int { sessions.count }

    /// Ranging sessions the radio allows: as many as the board says it runs at once, unless the
    /// config names a number.
    func learnBudget(from board: BoardDescription) {
        guard context.config.rangingSessions == nil else { return }
        scheduler.budget = max(1, board.maxRangingSessions ?? BridgeConfig.defaultRangingSessions)
    }

    private var now: Int64 { context.time.nowMilliseconds() }

    /// How long a peer we turn away should wait: about as long as the peers waiting before it.
    private var retryAfter: Int64 {
        scheduler.retryAfter(waiting: max(0, sessions.count - scheduler.budget))
    }

    // MARK: Feeding sessions

    /// Hands `input` to the peer's session and applies what it answers; returns its report, if
    /// the input was a tick.
    @discardableResult
    private func feed(_ peer: PeerID, _ input: PeerInput) async -> SessionReport? {
        guard let session = sessions[peer] else { return nil }
        var report: SessionReport?
        var ended: Event.PeerLost.Reason?
        for output in await session.handle(input) {
            switch output {
            case .emit(let body): events.emit(body)
            case .bindLink(let link): peerByLink[link] = peer
            case .unbindLink(let link): if peerByLink[link] == peer { peerByLink[link] = nil }
            case .route(let route): setRoute(route, of: peer)
            case .consumeContact: proximity[peer]?.processor.consumeContact()
            case .report(let r): report = r
            case .end(let reason): ended = reason
            case .send, .connect, .disconnect, .openUWB, .closeUWB, .reserveSharedPlace, .log: break  // the session's own
            }
        }
        if let ended { await remove(peer, reason: ended) }
        return report
    }

    private func view(of peer: PeerID) -> ProximityView {
        proximity[peer]?.view ?? ProximityView()
    }

    // MARK: BLE

    func handle(_ event: BLEEvent) async {
        switch event {
        case .advertisement(let address, let rssi, let data):
            await advertisement(from: address, rssi: rssi, data: data)
        case .linkOpened(let link, _, let initiatedLocally):
            openLinks.insert(link)
            Self.countLinks(openLinks.count, node: context.identity.peerID)
            if initiatedLocally {
                // A link we gave up on (connect timeout) that opened after all has no peer: close it.
                guard let peer = peerByLink[link] else { return await context.ble.disconnect(link) }
                let version = advertised[peer]?.version ?? .v1
                if let handshake = context.channels.openOutgoing(link, peerVersion: version, now: now) {
                    await sendFrame(handshake, on: link)  // the link is the peer's once the handshake completes
                } else {
                    await feed(peer, .outgoingLinkOpened(link, rangingSecret: nil))
                }
            } else {
                linksAwaitingHello.insert(link)
            }
        case .linkData(let link, let sdu):
            await linkData(sdu, on: link)
        case .linkClosed(let link):
            if openLinks.remove(link) == nil {
                Self.connectFailed(node: context.identity.peerID)  // closed before it opened: the connection attempt failed
            }
            Self.countLinks(openLinks.count, node: context.identity.peerID)
            linksAwaitingHello.remove(link)
            context.channels.close(link)
            guard let peer = peerByLink.removeValue(forKey: link) else { return }
            await feed(peer, .linkClosed(link))
        case .adapterPowered:
            break  // BridgeNode reports it; the links that went with the power close on their own
        }
    }

    /// For whatever metrics backend the process set up (`--http`'s `/metrics`; none: no-ops),
    /// per node (a demo or a world runs several in one process).
    static func countLinks(_ open: Int, node: PeerID) {
        Gauge(label: "nearby_ble_links", dimensions: [("node", node.description)]).record(open)
    }

    static func connectFailed(node: PeerID) {
        Counter(label: "nearby_ble_connect_failures_total", dimensions: [("node", node.description)]).increment()
    }

    private func advertisement(from address: BLEAddress, rssi: Int, data: [UInt8]) async {
        guard let (advert, version) = readAdvert(from: address, data), advert.peerID != context.identity.peerID else { return }
        advertised[advert.peerID] = (version, advert.capabilities)
        let name = AdvertisingData(data).localName
        await sessionFor(advert.peerID, name: name, rssi: rssi)
        await feed(advert.peerID, .heard(advert, name: name, address: address, rssi: rssi))
    }

    /// A peer's advert in the version this node speaks with it: private (v2) with our event
    /// key, v1 with our group otherwise; v1 peers are ignored by a keyed node unless allowed.
    private func readAdvert(from address: BLEAddress, _ data: [UInt8]) -> (Advertisement, PeerMessage.Version)? {
        let security = context.config.security
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
            context.logger.debug("malformed advertisement", metadata: ["from": "\(address)", "error": "\(error)"])
            return nil
        }
        guard let advert, advert.group == context.identity.group else { return nil }
        guard security.groupKey == nil || security.allowInsecurePeers else {
            ignoreOnce(
                "v1:\(advert.peerID)",
                "ignoring a v1 (unencrypted) peer; set \"allowInsecurePeers\": true to range with it",
                ["peer": "\(advert.peerID)"])
            return nil
        }
        return (advert, .v1)
    }

    private func ignoreOnce(_ key: String, _ message: String, _ metadata: Logger.Metadata) {
        guard ignoredOnce.count < 4096, ignoredOnce.insert(key).inserted else { return }
        context.logger.notice("\(message)", metadata: metadata)
    }

    private func sendFrame(_ frame: [UInt8], on link: LinkID) async {
        do {
            try await context.ble.send(frame, on: link)
        } catch {
            context.logger.debug("handshake send failed", metadata: ["link": "\(link)", "error": "\(error)"])
        }
    }

    private func linkData(_ sdu: [UInt8], on link: LinkID) async {
        let message: PeerMessage
        switch context.channels.receive(sdu, on: link) {
        case .message(let received): message = received
        case .reply(let frame): return await sendFrame(frame, on: link)
        case .established:
            guard let peer = peerByLink[link] else { return await drop(link, because: "handshake on an unknown link") }
            await feed(peer, .outgoingLinkOpened(link, rangingSecret: context.channels.rangingSecret(link)))
            return
        case .refused(let reason): return await drop(link, because: reason)
        case .discarded(let reason):
            ignoreOnce(
                "discarded:\(link)", "discarding peer-channel frames that do not authenticate (altered, cut short or replayed on the air)",
                ["link": "\(link)", "peer": "\(peerByLink[link].map { "\($0)" } ?? "-")", "first": "\(reason)"])
            return
        }
        if linksAwaitingHello.contains(link) {
            guard case .hello(let hello) = message else {
                await drop(link, because: "first message was not hello")
                return
            }
            let secret = context.channels.rangingSecret(link)
            // v1 names its group in the hello; on a v2 link the handshake proved membership.
            guard secret != nil || hello.group == context.identity.group, hello.peerID < context.identity.peerID else {
                await drop(link, because: "hello from \(hello.peerID) breaks group or role rules")
                return
            }
            linksAwaitingHello.remove(link)
            await sessionFor(hello.peerID, name: hello.name, rssi: nil)
            await feed(hello.peerID, .incomingHello(link, hello, retryAfter: retryAfter, rangingSecret: secret))
            return
        }
        guard let peer = peerByLink[link] else {
            await drop(link, because: "message on an unknown link")
            return
        }
        await feed(peer, .message(message, on: link, view(of: peer)))
    }

    /// Closes a link whose peer broke the protocol before any session owned it.
    private func drop(_ link: LinkID, because reason: String) async {
        context.logger.warning("closing link", metadata: ["link": "\(link)", "reason": "\(reason)"])
        linksAwaitingHello.remove(link)
        context.channels.close(link)
        if let peer = peerByLink[link] {
            await feed(peer, .linkClosed(link))
            peerByLink[link] = nil
        }
        await context.ble.disconnect(link)
    }

    /// Creates the peer's session (and reports it found) on first contact. A new peer gets a
    /// ranging session at once if one is free; at the peer cap it evicts another peer first.
    private func sessionFor(_ peer: PeerID, name: String?, rssi: Int?) async {
        guard sessions[peer] == nil else {
            lastHeard[peer] = now
            return
        }
        if sessions.count >= context.config.maxPeers { await evictOne() }
        var demand = RangingScheduler.Demand()
        for other in granted { demand.add(sharing: sharesSession(other), place: sharedPlace[other]) }
        demand.add(sharing: sharesSession(peer), place: nil)
        let grant = scheduler.sessionsNeeded(demand) <= scheduler.budget
        sessions[peer] = PeerSession(peer: peer, name: name ?? "", context: context, seed: random.next(), granted: grant)
        proximity[peer] = PeerProximity(processor: RangeProcessor(peer: peer.description, config: context.config))
        if grant { granted.insert(peer) }
        since[peer] = now
        lastHeard[peer] = now
        events.emit(.peerFound(.init(peer: peer.description, name: name ?? "", rssi: rssi)))
    }

    /// Drops the least recently heard peer, preferring one without a ranging session.
    private func evictOne() async {
        let victim = lastHeard.min { a, b in
            (granted.contains(a.key) ? 1 : 0, a.value, a.key) < (granted.contains(b.key) ? 1 : 0, b.value, b.key)
        }
        guard let victim else { return }
        evicted += 1
        await remove(victim.key, reason: .evicted)
    }

    /// Whether this peer, once granted, ranges in a one-to-many session we control.
    private func sharesSession(_ peer: PeerID) -> Bool {
        context.config.controleesPerSession > 1 && context.identity.peerID < peer
            && advertised[peer]?.capabilities.contains(.oneToMany) == true
    }

    private func setRoute(_ route: UWBRoute?, of peer: PeerID) {
        if let old = routeByPeer.removeValue(forKey: peer) { peerByRoute[old] = nil }
        guard let route else { return }
        routeByPeer[peer] = route
        peerByRoute[route] = peer
    }

    // MARK: UWB

    /// Range notifications in arrival order: each measurement goes to its peer by session and
    /// address; each peer's readings run in order, peers in the order their first reading came,
    /// and all their events go out together. Sessions hear only of contacts.
    func handle(_ rounds: [RangeData]) async {
        batchReadings.removeAll(keepingCapacity: true)
        batchPeers.removeAll(keepingCapacity: true)
        for round in rounds {
            for measurement in round.measurements {
                guard case .short(let address) = measurement.address,
                    let peer = peerByRoute[UWBRoute(token: round.session, peerAddress: address)]
                else { continue }
                batchReadings.append((peer, RangeReading(round: round, measurement: measurement)))
                // A batch holds the rounds of one radio read: nearly always one peer's.
                if !batchPeers.contains(peer) { batchPeers.append(peer) }
            }
        }
        let now = self.now
        let correction = context.boardCorrection.correction
        var batch: [Event] = []
        batch.reserveCapacity(batchReadings.count)
        var contacts: [(PeerID, Double)] = []
        for peer in batchPeers {
            // Updated where it lies in the dictionary: one lookup, no copy of the peer's state.
            guard let index = proximity.index(forKey: peer) else { continue }
            proximity.values[index].processor.correction = correction
            for entry in batchReadings where entry.peer == peer {
                process(entry.reading, of: peer, state: &proximity.values[index], hostTime: now, into: &batch, contacts: &contacts)
            }
            nearest.update(peer: peer, distance: proximity.values[index].processor.proximity.filtered, time: now)
        }
        events.emit(batch)
        for (peer, distance) in contacts { await feed(peer, .contact(distance: distance)) }
    }

    /// Runs one of a peer's readings, corrected for the board as of this batch, and appends its
    /// `range`, `near` and `far` events.
    private func process(
        _ reading: RangeReading, of peer: PeerID, state: inout PeerProximity, hostTime: Int64, into batch: inout [Event],
        contacts: inout [(PeerID, Double)]
    ) {
        let outcome = state.processor.process(reading.measurement, of: reading.round, hostTime: hostTime)
        if outcome.measured { state.lastMeasuredAt = hostTime }
        if let corrected = outcome.corrected, outcome.range.nlos != true, calibrationWatch.add(corrected: corrected) {
            context.logger.warning(
                "the UWB board reads short: \(calibrationWatch.belowContact) of \(calibrationWatch.closeReadings) readings closer than 30 cm were below -8 cm after correction; it looks uncalibrated (run `nearby-bridge calibrate`)")
        }
        if outcome.corrected != nil, levelWatch.add(hasLevel: outcome.range.rssi != nil) {
            context.logger.warning(
                "the UWB board reports no RSSI (\(LevelWatch.readingsBeforeWarning) rounds in a row): no bias correction, bumps decided from distance alone, so hand-overs 15–25 cm apart may bump; use firmware that honours RSSI_REPORTING (UCI 2.0: UCI 1.1 range data has no RSSI; firmware-notes/rssi.md)")
        }
        if outcome.invalid { invalidReadings += 1 }
        batch.append(Event(node: events.node, body: .range(outcome.range)))
        for change in outcome.changes {
            switch change {
            case .near(let d): batch.append(Event(node: events.node, body: .near(.init(peer: outcome.range.peer, distance: d, azimuth: outcome.azimuth))))
            case .far(let d): batch.append(Event(node: events.node, body: .far(.init(peer: outcome.range.peer, distance: d, azimuth: outcome.azimuth))))
            case .contact(let d): contacts.append((peer, d))
            }
        }
    }

    func handle(_ notification: UCINotification) async {
        switch notification {
        case .rangeData(let round):
            await handle([round])
        case .sessionStatus(let token, let state, let reason)
        where (state == .deinitialized || state == .idle) && reason != .stateChangeWithSessionManagementCommands:
            for peer in peerByRoute.filter({ $0.key.token == token }).values.sorted() {
                await feed(peer, .uwbSessionEnded(reason))
            }
        case .sessionStatus, .deviceStatus, .genericError, .multicastListUpdate:
            break
        }
    }

    /// A board's session manager reported how a peer's request went.
    func handle(_ event: UWBSessionsEvent) async {
        switch event {
        case .started(let peer, let sessionID, let token): await feed(peer, .uwbStarted(sessionID: sessionID, token: token))
        case .failed(let peer, let sessionID, let error): await feed(peer, .uwbFailed(sessionID: sessionID, error: "\(error)"))
        case .boardReady, .boardFailed, .boardUnresponsive: break  // the node's
        }
    }

    /// The UWB board went away: every session on it is gone, but the peers stay.
    func uwbLost() async {
        context.uwbSessions.boardLost()
        for peer in sessions.keys.sorted() { await feed(peer, .uwbLost) }
    }

    /// The board is back: restart the sessions of peers we were ranging with.
    func resumeRanging() async {
        for peer in sessions.keys.sorted() { await feed(peer, .uwbBack) }
    }

    // MARK: Time and shutdown

    func tick() async {
        for (link, frame) in context.channels.repeats(now: now, interval: context.config.retransmitMilliseconds) {
            await sendFrame(frame, on: link)
        }
        var reports: [(PeerID, SessionReport)] = []
        reports.reserveCapacity(sessions.count)
        for peer in sessions.keys.sorted() {
            guard let report = await feed(peer, .tick(view(of: peer))) else { continue }
            if report.timedOut {
                await remove(peer, reason: .timeout)
            } else {
                lastHeard[peer] = report.lastHeard
                sharedPlace[peer] = report.sharedSession
                reports.append((peer, report))
            }
        }
        nearest.expire(now: context.time.nowMilliseconds())
        reportNearest()
        await schedule(reports)
        reportStats(ranging: reports.count { $0.1.isRanging })
    }

    /// Gives the radio's sessions to the peers the scheduler picks: takes them from peers that
    /// had their turn, and hands them to the next ones.
    private func schedule(_ reports: [(PeerID, SessionReport)]) async {
        let now = self.now
        let candidates = reports.map { peer, report in
            RangingScheduler.Candidate(
                peer: peer, granted: granted.contains(peer), since: since[peer] ?? now, holdsPriority: report.holdsPriority,
                rssi: report.rssi, available: report.available, sharesSession: sharesSession(peer),
                sharedSession: report.sharedSession)
        }
        let chosen = scheduler.choose(candidates, now: now)
        guard chosen != granted else { return }
        let retryAfter = self.retryAfter
        for peer in granted.subtracting(chosen).sorted() {
            granted.remove(peer)
            since[peer] = now
            await feed(peer, .revoked(retryAfter: retryAfter))
        }
        for peer in chosen.subtracting(granted).sorted() {
            granted.insert(peer)
            since[peer] = now
            await feed(peer, .granted)
        }
    }

    /// Every stats interval, while the node has more peers than sessions or dropped anything.
    private func reportStats(ranging: Int) {
        let now = self.now
        guard now - lastStatsAt >= context.config.statsIntervalMilliseconds else { return }
        lastStatsAt = now
        let shed = events.takeShed()
        defer { (evicted, invalidReadings) = (0, 0) }
        guard sessions.count > scheduler.budget || shed.ranges > 0 || shed.inputs > 0 || evicted > 0 || invalidReadings > 0 else { return }
        events.emit(
            .stats(
                .init(
                    peers: sessions.count, ranging: ranging, budget: scheduler.budget, shedRanges: shed.ranges,
                    shedInputs: shed.inputs, evicted: evicted, invalidReadings: invalidReadings)))
    }

    /// Writes a `nearest` event when the closest peer or its band differs from the last one written.
    private func reportNearest() {
        let current = nearest.current
        guard current?.peer != reportedNearest?.peer || current?.band != reportedNearest?.band else { return }
        reportedNearest = current
        events.emit(
            .nearest(
                .init(
                    peer: current?.peer.description, distance: current?.distance,
                    band: current.flatMap { Event.Nearest.Band(rawValue: $0.band.rawValue) })))
    }

    private func remove(_ peer: PeerID, reason: Event.PeerLost.Reason) async {
        guard sessions[peer] != nil else { return }
        await feed(peer, .close(sayGoodbye: false))
        sessions[peer] = nil
        proximity[peer] = nil
        granted.remove(peer)
        since[peer] = nil
        lastHeard[peer] = nil
        sharedPlace[peer] = nil
        advertised[peer] = nil
        peerByLink = peerByLink.filter { $0.value != peer }
        setRoute(nil, of: peer)
        events.emit(.peerLost(.init(peer: peer.description, reason: reason)))
        nearest.remove(peer: peer, now: context.time.nowMilliseconds())
    }

    /// Says goodbye to every peer and releases their UWB sessions.
    func closeAll() async {
        for peer in sessions.keys.sorted() { await feed(peer, .close(sayGoodbye: true)) }
    }
}
