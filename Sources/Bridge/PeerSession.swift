import BLE
import Events
import Logging
import PeerProtocol
import Proximity
import UCI
import UCIHost

/// What every peer session shares: who we are, the radios, and where events go.
struct PeerContext: Sendable {
    let identity: NodeIdentity
    let config: BridgeConfig
    let uwb: UCIHost
    /// The one-to-many sessions of peers we control; nil when every session is one-to-one.
    let sharedSessions: SharedSessions?
    let ble: any BLEAdapter
    let logger: Logger
    let time: any TimeSource
    /// Writes events of this node, in order, stamped with one time.
    let emitBodies: @Sendable ([Event.Body]) -> Void
    /// Range events the event stream shed and radio inputs the inbox dropped, since last asked.
    let takeShed: @Sendable () -> (ranges: Int, inputs: Int)

    func emit(_ body: Event.Body) {
        emitBodies([body])
    }

    func emit(_ bodies: [Event.Body]) {
        emitBodies(bodies)
    }
}

/// What the registry's scheduler needs to know about a session, gathered on each tick.
struct SessionReport: Sendable {
    var timedOut: Bool
    var holdsPriority: Bool
    var rssi: Double?
    var isRanging: Bool
    var available: Bool
    var lastHeard: Int64
    /// The one-to-many session it has a place in, as its controller.
    var sharedSession: UInt32?
}

/// One peer: its link, its UWB session, its proximity state and its profile drops.
///
/// Lifecycle: discovered (advert or hello) -> role fixed by comparing peer ids (the lower id
/// connects and is the UWB controller) -> parameters agreed over the link -> UWB session
/// configured and started -> ranges feed proximity -> contact starts a profile drop -> lost.
actor PeerSession {
    enum Stage: Equatable {
        case discovered
        case connecting(LinkID)
        case negotiating(LinkID)
        case ranging(LinkID)
    }

    /// A profile drop in progress. It completes only with the peer's card *and* the ack of ours.
    private struct Exchange {
        var bumpID: UInt32
        var startedAt: Int64
        var peerCard: String?
        var ownCardAcked = false
        var distance: Double?
        /// When our card last went out; it goes again every `retransmit` until answered.
        var cardSentAt: Int64
    }

    nonisolated let peer: PeerID
    private let context: PeerContext
    private(set) var stage: Stage = .discovered
    private(set) var name = ""
    private(set) var address: BLEAddress?
    /// The UWB short address the peer advertises: what we propose as controller. Ranges are
    /// matched against the agreed session's address instead, because a controlee may never have
    /// heard its controller's advert (it learns of it from the controller's `hello`).
    private var advertisedUWBAddress: UInt16?
    /// When the peer was last heard by BLE, or (as of the last tick) measured by UWB.
    private var lastHeard: Int64
    private(set) var uwbToken: UInt32?
    private var random: SplitMix64
    /// Readings -> proximity -> `range` events; the registry feeds it (see `PeerRanging`).
    nonisolated let ranging: PeerRanging
    private var exchange: Exchange?
    /// Parameters we proposed as controller, until the peer accepts them, and when they last went out.
    private var pendingParameters: PeerMessage.RangingParameters?
    /// The agreed session and our role in it, kept so ranging can resume after a replug.
    private var agreedSession: (parameters: PeerMessage.RangingParameters, asController: Bool)?
    private var parametersSentAt: Int64 = 0
    /// When our outgoing connection attempt began.
    private var connectStartedAt: Int64 = 0
    /// Our place in a one-to-many session as this peer's controller, from the proposal until
    /// ranging ends.
    private var sharedPlace: (session: UInt32, controlee: UInt16)?
    /// Session id of the UWB session we range in, so a repeated proposal or acceptance (a lost
    /// answer, retransmitted) is recognised.
    private var sessionID: UInt32?
    /// The last profile drop that ended with this peer and whether it produced a bump: the answer
    /// to a retransmitted card. The next gesture uses the id after it.
    private var lastDrop: (bumpID: UInt32, completed: Bool)?
    private var lastBumpID: UInt32 { lastDrop?.bumpID ?? 0 }
    /// When the peer last sent any message.
    private var lastMessageAt: Int64
    /// Whether the registry's scheduler gives this peer one of the radio's ranging sessions.
    /// Without one the peer is still tracked, with rough proximity from its adverts.
    private(set) var granted: Bool
    private var rough = RoughProximity()
    /// After a `busy` (sent or received): no ranging before this time, unless the peer came
    /// close since (its adverts got as strong as the scheduler's `closeRSSI`). Both sides hear
    /// about the same signal strength, so both let it through about the same time.
    private var retry: (at: Int64, wasClose: Bool)?
    private var isClose: Bool { (rough.rssi ?? -.infinity) >= RangingScheduler.closeRSSI }

    init(peer: PeerID, context: PeerContext, seed: UInt64, granted: Bool) {
        self.peer = peer
        self.context = context
        self.random = SplitMix64(seed: seed)
        self.ranging = PeerRanging(peer: peer.description, config: context.config)
        self.lastHeard = context.time.nowMilliseconds()
        self.lastMessageAt = lastHeard
        self.granted = granted
    }

    private var isInitiator: Bool { context.identity.peerID < peer }
    private var now: Int64 { context.time.nowMilliseconds() }
    private var logger: Logger {
        var logger = context.logger
        logger[metadataKey: "peer"] = "\(peer)"
        return logger
    }

    /// Where this peer's rounds arrive while its UWB session runs.
    var uwbRoute: UWBRoute? {
        guard let token = uwbToken, let agreed = agreedSession else { return nil }
        let parameters = agreed.parameters
        return UWBRoute(token: token, peerAddress: agreed.asController ? parameters.controleeAddress : parameters.controllerAddress)
    }

    var link: LinkID? {
        switch stage {
        case .discovered: nil
        case .connecting(let link), .negotiating(let link), .ranging(let link): link
        }
    }

    // MARK: Discovery

    func heard(_ advert: Advertisement, name: String?, address: BLEAddress, rssi: Int) {
        lastHeard = now
        self.address = address
        advertisedUWBAddress = advert.uwbShortAddress
        if let name { self.name = name }
        if rough.add(rssi), !granted { reportRough() }
    }

    private func reportRough() {
        guard let rssi = rough.rssi, let band = rough.band else { return }
        let eventBand: Event.Rough.Band =
            switch band {
            case .near: .near
            case .medium: .medium
            case .far: .far
            }
        context.emit(.rough(.init(peer: peer.description, rssi: Int(rssi.rounded()), band: eventBand)))
    }

    /// Whether a `busy` still holds us back: until its time, unless the peer came close since.
    private var mayRange: Bool {
        guard let retry else { return true }
        return now >= retry.at || (isClose && !retry.wasClose)
    }

    /// Starts the connection if this side is the initiator, holds a ranging session and nothing
    /// is under way.
    func connectIfInitiator() async -> LinkID? {
        guard isInitiator, granted, mayRange, stage == .discovered, let address else { return nil }
        do {
            let link = try await context.ble.connect(to: address)
            stage = .connecting(link)
            connectStartedAt = now
            return link
        } catch {
            logger.warning("connect failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Our outgoing link is up: introduce ourselves and propose the ranging parameters. A link
    /// we gave up on (see `connectTimeoutMilliseconds`) that opens after all is being closed.
    func outgoingLinkOpened(_ link: LinkID) async {
        guard stage == .connecting(link), let advertisedUWBAddress else { return }
        if let shared = context.sharedSessions {
            let parameters = await shared.reserve(controlee: advertisedUWBAddress)
            sharedPlace = (parameters.sessionID, advertisedUWBAddress)
            guard stage == .connecting(link) else {
                // The link closed while we waited for the place.
                await stopUWB()
                return
            }
            stage = .negotiating(link)
            pendingParameters = parameters
            await proposeParameters(on: link)
            return
        }
        let parameters = PeerMessage.RangingParameters(
            sessionID: UInt32.random(in: 1...UInt32.max, using: &random),
            channel: context.config.uwb.channel,
            preambleCodeIndex: context.config.uwb.preambleCodeIndex,
            controllerAddress: context.identity.uwbShortAddress,
            controleeAddress: advertisedUWBAddress,
            vendorID: UInt16.random(in: 1...UInt16.max, using: &random),
            staticSTSIV: (0..<6).map { _ in UInt8.random(in: 0...255, using: &random) },
            rangingIntervalMilliseconds: context.config.uwb.rangingIntervalMilliseconds)
        stage = .negotiating(link)
        pendingParameters = parameters
        await proposeParameters(on: link)
    }

    /// Sends `hello` and the pending parameters; repeated from `tick` until they are accepted, so
    /// a lost message delays ranging instead of stopping it.
    private func proposeParameters(on link: LinkID) async {
        guard let parameters = pendingParameters else { return }
        parametersSentAt = now
        await send(.hello(hello), on: link)
        await send(.rangingParameters(parameters), on: link)
    }

    /// A peer connected to us and introduced itself. Returns false when we have no ranging
    /// session for it now: it is told `busy` and the link is closed.
    func incomingLinkAccepted(_ link: LinkID, hello: PeerMessage.Hello, retryAfter: Int64) async -> Bool {
        if self.link != nil { await closeRadios(sayGoodbye: false) }
        lastHeard = now
        name = hello.name
        guard granted else {
            await refuse(link, retryAfter: retryAfter)
            return false
        }
        retry = nil
        stage = .negotiating(link)
        await send(.hello(self.hello), on: link)
        return true
    }

    /// Tells the peer we have no session for it and closes the link.
    private func refuse(_ link: LinkID, retryAfter: Int64) async {
        let retryAfter = retryDelay(retryAfter, margin: 6)
        retry = (now + retryAfter, isClose)
        await send(.busy(retryAfterMilliseconds: UInt16(clamping: retryAfter)), on: link)
        await context.ble.disconnect(link)
    }

    // MARK: Ranging schedule

    /// The scheduler gives this peer a ranging session: connect if we are the initiator.
    func grant() async -> LinkID? {
        granted = true
        return await connectIfInitiator()
    }

    /// The scheduler takes the session away (rotation): the UWB session ends and the link closes;
    /// the initiator is asked to wait `retryAfter` before coming back. Returns the closed link.
    func revoke(retryAfter: Int64) async -> LinkID? {
        granted = false
        reportRough()
        guard let link else { return nil }
        if isInitiator {
            retry = (now + retryDelay(retryAfter), isClose)
            await context.ble.disconnect(link)
        } else {
            await refuse(link, retryAfter: retryAfter)
        }
        await linkClosed()
        return link
    }

    /// A close peer may bump any moment: it comes back within a second, and the scheduler's
    /// rotation decides; the others wait as long as the scheduler says. Both sides apply this,
    /// each with its own reading of the signal, with 6 dB to spare on the side that says `busy`
    /// so that a peer the other side already finds close is not sent away for long.
    private func retryDelay(_ retryAfter: Int64, margin: Double = 0) -> Int64 {
        (rough.rssi ?? -.infinity) >= RangingScheduler.closeRSSI - margin ? min(retryAfter, 1_000) : retryAfter
    }

    /// What the scheduler weighs; see `RangingScheduler`.
    private var isRanging: Bool {
        if case .ranging = stage { true } else { false }
    }

    private var hello: PeerMessage.Hello {
        .init(peerID: context.identity.peerID, group: context.identity.group, name: context.identity.name)
    }

    // MARK: Peer messages

    enum Verdict: Equatable {
        case ok
        /// The peer is busy; we closed the link.
        case linkClosed
        case peerEnded
        case violation(String)
    }

    func receive(_ message: PeerMessage) async -> Verdict {
        lastHeard = now
        lastMessageAt = now
        guard let link else { return .violation("message without a link") }
        switch message {
        case .hello(let hello):
            name = hello.name
        case .rangingParameters(let parameters):
            guard !isInitiator else { return .violation("the controller sent ranging parameters to the controller") }
            guard parameters.controleeAddress == context.identity.uwbShortAddress else {
                return .violation("parameters name UWB address \(parameters.controleeAddress), ours is \(context.identity.uwbShortAddress)")
            }
            // A repeat (our acceptance was lost) is answered again; a new proposal replaces the session.
            if sessionID != parameters.sessionID {
                await stopUWB()
                guard await startUWB(parameters, asController: false) else { return .ok }
                stage = .ranging(link)
            }
            await send(.parametersAccepted(sessionID: parameters.sessionID), on: link)
        case .parametersAccepted(let accepted):
            if case .ranging = stage, accepted == sessionID { return .ok }  // a repeated acceptance
            guard let parameters = pendingParameters, parameters.sessionID == accepted, case .negotiating = stage else {
                return .violation("acceptance of unknown session \(accepted)")
            }
            pendingParameters = nil
            guard await startUWB(parameters, asController: true) else { return .ok }
            stage = .ranging(link)
        case .card(let bumpID, let cardJSON):
            await receivedCard(bumpID: bumpID, json: cardJSON, on: link)
        case .cardAck(let bumpID):
            if exchange?.bumpID == bumpID {
                exchange?.ownCardAcked = true
                await completeExchangeIfDone(on: link)
            }
        case .cardDecline(let bumpID):
            if let current = exchange, current.bumpID == bumpID {
                endExchange(current, reason: "the peer declined it")
            } else if bumpID > lastBumpID {
                // A drop we never joined: keep bump ids in step.
                lastDrop = (bumpID, false)
            }
        case .goodbye:
            return .peerEnded
        case .busy(let retryAfter):
            retry = (now + retryDelay(Int64(retryAfter)), isClose)
            await context.ble.disconnect(link)
            await linkClosed()
            return .linkClosed
        }
        return .ok
    }

    func linkClosed() async {
        stage = .discovered
        if let current = exchange { endExchange(current, reason: "the link closed") }
        pendingParameters = nil
        agreedSession = nil
        await stopUWB()
    }

    /// The board vanished with all its sessions; nothing to stop or deinit.
    func uwbLost() {
        uwbToken = nil
    }

    /// Starts the agreed session again on a replugged board. The peer kept its side running, so
    /// ranging resumes without a new negotiation.
    func resumeUWB() async {
        guard case .ranging = stage, uwbToken == nil, let agreed = agreedSession else { return }
        _ = await startUWB(agreed.parameters, asController: agreed.asController)
    }

    // MARK: UWB

    private func startUWB(_ parameters: PeerMessage.RangingParameters, asController: Bool) async -> Bool {
        let uwb = context.uwb
        do {
            if asController, let shared = context.sharedSessions, let place = sharedPlace {
                uwbToken = try await shared.join(controlee: place.controlee, session: place.session)
            } else {
                let token = try await uwb.initSession(id: parameters.sessionID)
                uwbToken = token
                try await uwb.setAppConfig(session: token, context.config.uwb.appConfig(for: parameters, asController: asController))
                try await uwb.startRanging(session: token)
            }
            agreedSession = (parameters, asController)
            sessionID = parameters.sessionID
            logger.info("ranging", metadata: ["role": "\(asController ? "controller" : "controlee")", "session": "\(parameters.sessionID)"])
            return true
        } catch {
            logger.error("could not start the UWB session", metadata: ["error": "\(error)"])
            await stopUWB()
            return false
        }
    }

    private func stopUWB() async {
        sessionID = nil
        if let place = sharedPlace, let shared = context.sharedSessions {
            sharedPlace = nil
            uwbToken = nil
            await shared.leave(controlee: place.controlee, session: place.session)
            return
        }
        guard let token = uwbToken else { return }
        uwbToken = nil
        if await context.uwb.sessionStates[token] == .active {
            try? await context.uwb.stopRanging(session: token)
        }
        do {
            try await context.uwb.deinitSession(token)
        } catch {
            logger.warning("SESSION_DEINIT failed", metadata: ["error": "\(error)"])
        }
    }

    /// The UWBS ended our session on its own (e.g. max retries): start over from discovery.
    func uwbSessionEnded(reason: ReasonCode) async {
        logger.warning("UWB session ended by the device", metadata: ["reason": "\(reason)"])
        uwbToken = nil
        sessionID = nil
        if let link { await context.ble.disconnect(link) }
        await linkClosed()
    }

    // MARK: Profile drop
    //
    // Exactly one bump on each side per gesture, or none on either, over a link that loses
    // messages (docs/PROTOCOL.md). The UWB controller decides every drop: it acknowledges the
    // controlee's card only once it holds the ack of its own (then it reports the bump), or
    // declines the drop when its deadline passes. The controlee never gives up on its own while
    // the controller can still be heard; it repeats its card until the decision reaches it. Every
    // message may arrive twice, so every answer is idempotent.

    /// The side that decides each profile drop.
    private var decides: Bool { isInitiator }

    /// Proximity saw a contact in this peer's ranges: start a profile drop, unless one is under way.
    func contactDetected(distance: Double) async {
        guard exchange == nil, case .ranging(let link) = stage else { return }
        let bumpID = lastBumpID &+ 1
        logger.info("profile drop started", metadata: ["bump": "\(bumpID)"])
        exchange = Exchange(bumpID: bumpID, startedAt: now, distance: distance, cardSentAt: now)
        await send(.card(bumpID: bumpID, cardJSON: context.identity.card.json), on: link)
    }

    private func receivedCard(bumpID: UInt32, json: String, on link: LinkID) async {
        let card: ProfileCard
        do {
            card = try ProfileCard(json: json)
        } catch {
            logger.warning("ignoring an invalid profile card", metadata: ["error": "\(error)"])
            return
        }
        if let last = lastDrop, bumpID <= last.bumpID {
            // The peer repeats a drop that has ended here: our answer was lost. Answer again.
            if bumpID == last.bumpID {
                await send(last.completed ? .cardAck(bumpID: bumpID) : .cardDecline(bumpID: bumpID), on: link)
            }
            return
        }
        if var current = exchange {
            if bumpID < current.bumpID { return }  // the peer will follow our higher id
            if bumpID > current.bumpID {
                // Both started; the higher id wins and both converge on it.
                current = Exchange(bumpID: bumpID, startedAt: current.startedAt, distance: current.distance, cardSentAt: now)
                await send(.card(bumpID: bumpID, cardJSON: context.identity.card.json), on: link)
            }
            current.peerCard = card.json
            exchange = current
        } else {
            // The peer saw the contact first. Join, unless this gesture already had its bump.
            guard ranging.takeContact() else {
                logger.info("declining a second profile drop in one gesture", metadata: ["bump": "\(bumpID)"])
                lastDrop = (bumpID, false)
                await send(.cardDecline(bumpID: bumpID), on: link)
                return
            }
            logger.info("profile drop joined", metadata: ["bump": "\(bumpID)"])
            exchange = Exchange(
                bumpID: bumpID, startedAt: now, peerCard: card.json, distance: ranging.filtered, cardSentAt: now)
            await send(.card(bumpID: bumpID, cardJSON: context.identity.card.json), on: link)
        }
        // The controlee acknowledges at once: the controller learns that we hold its card. The
        // controller's acknowledgement is its decision, sent when the drop completes.
        if !decides { await send(.cardAck(bumpID: bumpID), on: link) }
        await completeExchangeIfDone(on: link)
    }

    private func completeExchangeIfDone(on link: LinkID) async {
        guard let current = exchange, let card = current.peerCard, current.ownCardAcked else { return }
        exchange = nil
        lastDrop = (current.bumpID, true)
        context.emit(.bump(.init(peer: peer.description, bumpID: current.bumpID, distance: current.distance, cardJSON: card)))
        if decides { await send(.cardAck(bumpID: current.bumpID), on: link) }
    }

    private func endExchange(_ current: Exchange, reason: String) {
        logger.warning("profile drop ended without a bump", metadata: ["bump": "\(current.bumpID)", "reason": "\(reason)"])
        exchange = nil
        lastDrop = (current.bumpID, false)
    }

    // MARK: Time

    /// Repeats unanswered messages and applies the deadlines, and reports what the scheduler
    /// needs, including whether the peer has been silent for longer than the peer timeout.
    func tick() async -> SessionReport {
        if let measured = ranging.lastMeasuredAt { lastHeard = max(lastHeard, measured) }
        let timedOut = await tickTimers()
        return SessionReport(
            timedOut: timedOut, holdsPriority: ranging.isNear || exchange != nil, rssi: rough.rssi,
            isRanging: isRanging, available: mayRange, lastHeard: lastHeard, sharedSession: sharedPlace?.session)
    }

    private func tickTimers() async -> Bool {
        let now = self.now
        let config = context.config
        if case .connecting(let link) = stage, now - connectStartedAt >= config.connectTimeoutMilliseconds {
            logger.warning("connection attempt timed out; trying again at the next advert", metadata: ["link": "\(link)"])
            stage = .discovered
            await context.ble.disconnect(link)
        }
        if case .negotiating(let link) = stage, pendingParameters != nil, now - parametersSentAt >= config.retransmitMilliseconds {
            await proposeParameters(on: link)
        }
        if let current = exchange, let link {
            if decides, now - current.startedAt > config.exchangeTimeoutMilliseconds {
                endExchange(current, reason: "no answer before the deadline")
                await send(.cardDecline(bumpID: current.bumpID), on: link)
            } else if !decides, now - max(lastMessageAt, current.startedAt) > 4 * config.exchangeTimeoutMilliseconds {
                // The controller decides within its deadline and answers every card after it; this
                // long a silence means the link is gone. Tell it, in case it still can hear us.
                endExchange(current, reason: "the peer fell silent")
                await send(.cardDecline(bumpID: current.bumpID), on: link)
            } else if (!decides || !current.ownCardAcked), now - current.cardSentAt >= config.retransmitMilliseconds {
                exchange?.cardSentAt = now
                await send(.card(bumpID: current.bumpID, cardJSON: context.identity.card.json), on: link)
            }
        }
        return now - lastHeard > config.peerTimeoutMilliseconds
    }

    /// Ends everything with this peer.
    func closeRadios(sayGoodbye: Bool) async {
        if let link {
            // Best effort: the peer may have left the air already.
            if sayGoodbye { try? await context.ble.send(PeerMessage.goodbye.encoded(), on: link) }
            await context.ble.disconnect(link)
        }
        await linkClosed()
    }

    private func send(_ message: PeerMessage, on link: LinkID) async {
        do {
            try await context.ble.send(message.encoded(), on: link)
        } catch {
            logger.warning("send failed", metadata: ["error": "\(error)"])
        }
    }
}
