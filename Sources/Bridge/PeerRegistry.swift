import BLE
import Events
import Logging
import PeerProtocol
import Proximity
import UCI
import UCIHost

/// The dictionary of per-peer session actors, plus the indexes that route radio input to them:
/// by link (peer messages), by UWB session and address (ranges), and links still waiting for `hello`.
actor PeerRegistry {
    private let context: PeerContext
    private var sessions: [PeerID: PeerSession] = [:]
    private var peerByLink: [LinkID: PeerID] = [:]
    private var peerByRoute: [UWBRoute: PeerID] = [:]
    private var routeByPeer: [PeerID: UWBRoute] = [:]
    private var linksAwaitingHello: Set<LinkID> = []
    private var random: SplitMix64
    /// The closest peer across all sessions, and what the last `nearest` event said. Ranges
    /// update it as they come; ticks report it, so the ranges of one round (one peer after
    /// another) make one event rather than a burst.
    private var nearest: NearestTracker<PeerID>
    private var reportedNearest: NearestTracker<PeerID>.Nearest?
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
    private var lastStatsAt: Int64

    init(context: PeerContext, seed: UInt64) {
        self.context = context
        self.random = SplitMix64(seed: seed)
        self.nearest = NearestTracker(config: context.config.proximity)
        self.scheduler = RangingScheduler(budget: context.config.rangingSessions ?? BridgeConfig.defaultRangingSessions)
        if context.sharedSessions != nil { scheduler.controleesPerSession = context.config.controleesPerSession }
        self.lastStatsAt = context.time.nowMilliseconds()
    }

    var peerCount: Int { sessions.count }

    /// Ranging sessions the radio allows (from its capabilities when the config names none).
    func setRangingBudget(_ sessions: Int) {
        scheduler.budget = max(1, sessions)
    }

    private var now: Int64 { context.time.nowMilliseconds() }

    /// How long a peer we turn away should wait: about as long as the peers waiting before it.
    private var retryAfter: Int64 {
        scheduler.retryAfter(waiting: max(0, sessions.count - scheduler.budget))
    }

    // MARK: BLE

    func handle(_ event: BLEEvent) async {
        switch event {
        case .advertisement(let address, let rssi, let data):
            await advertisement(from: address, rssi: rssi, data: data)
        case .linkOpened(let link, _, let initiatedLocally):
            if initiatedLocally, let peer = peerByLink[link] {
                await sessions[peer]?.outgoingLinkOpened(link)
            } else {
                linksAwaitingHello.insert(link)
            }
        case .linkData(let link, let sdu):
            await linkData(sdu, on: link)
        case .linkClosed(let link):
            linksAwaitingHello.remove(link)
            guard let peer = peerByLink.removeValue(forKey: link), let session = sessions[peer] else { return }
            if await session.link == link {
                await session.linkClosed()
                await refreshToken(of: session)
            }
        case .adapterPowered:
            break  // BridgeNode reports it; the links that went with the power close on their own
        }
    }

    private func advertisement(from address: BLEAddress, rssi: Int, data: [UInt8]) async {
        let advert: Advertisement?
        do {
            advert = try Advertisement.find(in: data)
        } catch {
            context.logger.debug("malformed advertisement", metadata: ["from": "\(address)", "error": "\(error)"])
            return
        }
        guard let advert, advert.group == context.identity.group, advert.peerID != context.identity.peerID else { return }
        let name = LocalName.find(in: data)
        let session = await sessionFor(advert.peerID, name: name, rssi: rssi)
        await session.heard(advert, name: name, address: address, rssi: rssi)
        if let link = await session.connectIfInitiator() {
            peerByLink[link] = advert.peerID
        }
    }

    private func linkData(_ sdu: [UInt8], on link: LinkID) async {
        let message: PeerMessage
        do {
            message = try PeerMessage(frame: sdu)
        } catch {
            await drop(link, because: "undecodable message: \(error)")
            return
        }
        if linksAwaitingHello.contains(link) {
            guard case .hello(let hello) = message else {
                await drop(link, because: "first message was not hello")
                return
            }
            guard hello.group == context.identity.group, hello.peerID < context.identity.peerID else {
                await drop(link, because: "hello from \(hello.peerID) breaks group or role rules")
                return
            }
            linksAwaitingHello.remove(link)
            let session = await sessionFor(hello.peerID, name: hello.name, rssi: nil)
            if let old = await session.link { peerByLink[old] = nil }
            if await session.incomingLinkAccepted(link, hello: hello, retryAfter: retryAfter) {
                peerByLink[link] = hello.peerID
            }
            return
        }
        guard let peer = peerByLink[link], let session = sessions[peer] else {
            await drop(link, because: "message on an unknown link")
            return
        }
        switch await session.receive(message) {
        case .ok:
            await refreshToken(of: session)
        case .linkClosed:
            peerByLink[link] = nil
            await refreshToken(of: session)
        case .peerEnded:
            await remove(session, reason: .peerEnded)
        case .violation(let why):
            await drop(link, because: why)
            await session.linkClosed()
            await refreshToken(of: session)
        }
    }

    /// Closes a link whose peer broke the protocol; the peer keeps its registry entry.
    private func drop(_ link: LinkID, because reason: String) async {
        context.logger.warning("closing link", metadata: ["link": "\(link)", "reason": "\(reason)"])
        linksAwaitingHello.remove(link)
        peerByLink[link] = nil
        await context.ble.disconnect(link)
    }

    /// The peer's session, created (and reported found) on first contact. A new peer gets a
    /// ranging session at once if one is free; at the peer cap it evicts another peer first.
    private func sessionFor(_ peer: PeerID, name: String?, rssi: Int?) async -> PeerSession {
        if let existing = sessions[peer] {
            lastHeard[peer] = now
            return existing
        }
        if sessions.count >= context.config.maxPeers { await evictOne() }
        var demand = RangingScheduler.Demand()
        for other in granted { demand.add(sharing: sharesSession(other), place: sharedPlace[other]) }
        demand.add(sharing: sharesSession(peer), place: nil)
        let grant = scheduler.sessionsNeeded(demand) <= scheduler.budget
        let session = PeerSession(peer: peer, context: context, seed: random.next(), granted: grant)
        sessions[peer] = session
        if grant { granted.insert(peer) }
        since[peer] = now
        lastHeard[peer] = now
        context.emit(.peerFound(.init(peer: peer.description, name: name ?? "", rssi: rssi)))
        return session
    }

    /// Drops the least recently heard peer, preferring one without a ranging session.
    private func evictOne() async {
        let victim = lastHeard.min { a, b in
            (granted.contains(a.key) ? 1 : 0, a.value, a.key) < (granted.contains(b.key) ? 1 : 0, b.value, b.key)
        }
        guard let victim, let session = sessions[victim.key] else { return }
        evicted += 1
        await remove(session, reason: .evicted)
    }

    /// Whether this peer, once granted, ranges in a one-to-many session we control.
    private func sharesSession(_ peer: PeerID) -> Bool {
        context.sharedSessions != nil && context.identity.peerID < peer
    }

    private func refreshToken(of session: PeerSession) async {
        setRoute(await session.uwbRoute, of: session.peer)
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
        var order: [PeerID] = []
        var readings: [PeerID: [RangeReading]] = [:]
        for round in rounds {
            for measurement in round.measurements {
                guard case .short(let address) = measurement.address,
                    let peer = peerByRoute[UWBRoute(token: round.session, peerAddress: address)]
                else { continue }
                if readings[peer] == nil { order.append(peer) }
                readings[peer, default: []].append(RangeReading(round: round, measurement: measurement))
            }
        }
        let now = self.now
        var events: [Event.Body] = []
        events.reserveCapacity(order.count)
        var contacts: [(PeerSession, Double)] = []
        for peer in order {
            guard let session = sessions[peer], let peerReadings = readings[peer] else { continue }
            let outcome = session.ranging.process(peerReadings, hostTime: now, into: &events)
            nearest.update(peer: peer, distance: outcome.filtered, time: now)
            contacts += outcome.contacts.map { (session, $0) }
        }
        context.emit(events)
        for (session, distance) in contacts { await session.contactDetected(distance: distance) }
    }

    func handle(_ notification: UCINotification) async {
        switch notification {
        case .rangeData(let round):
            await handle([round])
        case .sessionStatus(let token, let state, let reason)
        where (state == .deinitialized || state == .idle) && reason != .stateChangeWithSessionManagementCommands:
            for peer in peerByRoute.filter({ $0.key.token == token }).values.sorted() {
                guard let session = sessions[peer] else { continue }
                await session.uwbSessionEnded(reason: reason)
                await refreshToken(of: session)
            }
        case .sessionStatus, .deviceStatus, .genericError, .multicastListUpdate:
            break
        }
    }

    /// The UWB board went away: every session on it is gone, but the peers stay.
    func uwbLost() async {
        peerByRoute = [:]
        routeByPeer = [:]
        await context.sharedSessions?.boardLost()
        for peer in sessions.keys.sorted() { await sessions[peer]?.uwbLost() }
    }

    /// The board is back: restart the sessions of peers we were ranging with.
    func resumeRanging() async {
        for peer in sessions.keys.sorted() {
            guard let session = sessions[peer] else { continue }
            await session.resumeUWB()
            await refreshToken(of: session)
        }
    }

    // MARK: Time and shutdown

    func tick() async {
        var reports: [(PeerID, SessionReport)] = []
        reports.reserveCapacity(sessions.count)
        for peer in sessions.keys.sorted() {
            guard let session = sessions[peer] else { continue }
            let report = await session.tick()
            if report.timedOut {
                await remove(session, reason: .timeout)
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
            guard let session = sessions[peer] else { continue }
            if let link = await session.revoke(retryAfter: retryAfter) { peerByLink[link] = nil }
            await refreshToken(of: session)
        }
        for peer in chosen.subtracting(granted).sorted() {
            granted.insert(peer)
            since[peer] = now
            if let link = await sessions[peer]?.grant() { peerByLink[link] = peer }
        }
    }

    /// Every stats interval, while the node has more peers than sessions or dropped anything.
    private func reportStats(ranging: Int) {
        let now = self.now
        guard now - lastStatsAt >= context.config.statsIntervalMilliseconds else { return }
        lastStatsAt = now
        let shed = context.takeShed()
        defer { evicted = 0 }
        guard sessions.count > scheduler.budget || shed.ranges > 0 || shed.inputs > 0 || evicted > 0 else { return }
        context.emit(
            .stats(
                .init(
                    peers: sessions.count, ranging: ranging, budget: scheduler.budget, shedRanges: shed.ranges,
                    shedInputs: shed.inputs, evicted: evicted)))
    }

    /// Writes a `nearest` event when the closest peer or its band differs from the last one written.
    private func reportNearest() {
        let current = nearest.current
        guard current?.peer != reportedNearest?.peer || current?.band != reportedNearest?.band else { return }
        reportedNearest = current
        context.emit(
            .nearest(
                .init(
                    peer: current?.peer.description, distance: current?.distance,
                    band: current.flatMap { Event.Nearest.Band(rawValue: $0.band.rawValue) })))
    }

    private func remove(_ session: PeerSession, reason: Event.PeerLost.Reason) async {
        await session.closeRadios(sayGoodbye: false)
        sessions[session.peer] = nil
        granted.remove(session.peer)
        since[session.peer] = nil
        lastHeard[session.peer] = nil
        sharedPlace[session.peer] = nil
        peerByLink = peerByLink.filter { $0.value != session.peer }
        setRoute(nil, of: session.peer)
        context.emit(.peerLost(.init(peer: session.peer.description, reason: reason)))
        nearest.remove(peer: session.peer, now: context.time.nowMilliseconds())
    }

    /// Says goodbye to every peer and releases their UWB sessions.
    func closeAll() async {
        for peer in sessions.keys.sorted() {
            await sessions[peer]?.closeRadios(sayGoodbye: true)
        }
    }
}

/// The Complete (0x09) or Shortened (0x08) Local Name AD structure, usually in the scan response.
enum LocalName {
    static func find(in data: [UInt8]) -> String? {
        var index = 0
        while index < data.count {
            let length = Int(data[index])
            guard length > 0, index + 1 + length <= data.count else { return nil }
            let type = data[index + 1]
            if type == 0x09 || type == 0x08 {
                return String(validating: data[(index + 2)..<(index + 1 + length)], as: UTF8.self)
            }
            index += 1 + length
        }
        return nil
    }
}
