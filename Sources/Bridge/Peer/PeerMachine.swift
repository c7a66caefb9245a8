import BLE
import Events
import Logging
import PeerProtocol
import PeerSecurity
import UCI

/// What the registry's proximity state says about a peer when an input reaches its machine. The
/// registry is the only owner of proximity (it runs every ranging round); the machine reads this
/// snapshot and answers with `.consumeContact` when it takes the gesture's contact.
struct ProximityView: Sendable, Equatable {
    var contactArmed = false
    var filtered: Double?
    var isNear = false
    /// When a round last carried a distance: the peer is alive even if it sends no message.
    var lastMeasuredAt: Int64?
}

/// Everything that happens to one peer, as the machine sees it: radio input, the registry's
/// decisions, and the completions of the effects it asked for.
enum PeerInput: Sendable {
    case heard(Advertisement, name: String?, address: BLEAddress, rssi: Int)
    /// The adapter accepted our `.connect` and names the link it will open.
    case connectStarted(LinkID)
    case connectFailed(String)
    /// Our link is up (after the handshake, on a v2 link, whose ranging secret comes with it).
    case outgoingLinkOpened(LinkID, rangingSecret: [UInt8]?)
    /// A peer connected to us and its first message was a valid `hello`.
    case incomingHello(LinkID, PeerMessage.Hello, retryAfter: Int64, rangingSecret: [UInt8]?)
    case message(PeerMessage, on: LinkID, ProximityView)
    case linkClosed(LinkID)
    /// The answer to `.reserveSharedPlace`.
    case sharedPlaceReserved(PeerMessage.RangingParameters)
    /// The scheduler gives this peer one of the radio's ranging sessions, or takes it back.
    case granted
    case revoked(retryAfter: Int64)
    /// Proximity saw a contact in this peer's ranges.
    case contact(distance: Double)
    case uwbStarted(sessionID: UInt32, token: UInt32)
    case uwbFailed(sessionID: UInt32, error: String)
    /// The UWBS ended our session on its own (e.g. max retries).
    case uwbSessionEnded(ReasonCode)
    /// The board went away with every session on it, or came back.
    case uwbLost
    case uwbBack
    case tick(ProximityView)
    /// Ends everything with this peer (it is being removed, or the node stops).
    case close(sayGoodbye: Bool)
}

/// A UWB session the machine wants on the board.
struct UWBSessionRequest: Sendable, Equatable {
    var parameters: PeerMessage.RangingParameters
    var asController: Bool
    /// As controller of a one-to-many session: join the place reserved for this peer.
    var shared: Bool
    var sts: SessionSTS = .fromParameters
}

/// What the machine wants done. The peer's actor runs the radio effects; the registry applies the
/// rest (routes, events, removal), in order.
enum PeerAction: Sendable, Equatable {
    // Effects, run by `PeerSession`.
    case send(PeerMessage, on: LinkID)
    case connect(BLEAddress)
    case disconnect(LinkID)
    case openUWB(UWBSessionRequest)
    /// Gives up whatever this peer has on the board (a running session, one being opened, a
    /// reserved place); the board's session manager works out what that takes.
    case closeUWB
    case reserveSharedPlace(controlee: UInt16)
    case log(Logger.Level, String, Logger.Metadata)
    // Outputs, applied by `PeerRegistry`.
    case emit(Event.Body)
    case bindLink(LinkID)
    case unbindLink(LinkID)
    case route(UWBRoute?)
    case consumeContact
    case report(SessionReport)
    case end(Event.PeerLost.Reason)
}

/// What the registry's scheduler needs to know about a session, produced on each tick.
struct SessionReport: Sendable, Equatable {
    var timedOut: Bool
    var holdsPriority: Bool
    var rssi: Double?
    var isRanging: Bool
    var available: Bool
    var lastHeard: Int64
    /// The one-to-many session it has a place in, as its controller.
    var sharedSession: UInt32?
}

/// One peer's side of the peer protocol (docs/PROTOCOL.md) as a pure state machine:
/// `receive(input, now:) -> [PeerAction]`, no I/O, no clock of its own.
///
/// Lifecycle: discovered (advert or hello) -> role fixed by comparing peer ids (the lower id
/// connects and is the UWB controller) -> parameters agreed over the link -> UWB session
/// configured and started -> ranges feed proximity -> contact starts a profile drop -> lost.
struct PeerMachine: Sendable {
    enum Stage: Equatable, Sendable {
        case discovered
        case connecting(LinkID)
        case negotiating(LinkID)
        case ranging(LinkID)
    }

    /// The UWB session as far as the machine knows: asked for, running, or none.
    private enum UWB: Equatable {
        case idle
        case opening(UWBSessionRequest)
        case running(UWBSessionRequest, token: UInt32)

        var sessionID: UInt32? {
            switch self {
            case .idle: nil
            case .opening(let request), .running(let request, _): request.parameters.sessionID
            }
        }
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

    let peer: PeerID
    private let identity: NodeIdentity
    private let config: BridgeConfig
    /// Whether sessions we control are one-to-many (`controleesPerSession` > 1); used only with
    /// peers that advertise they can join one.
    private let controlsSharedSessions: Bool
    private var peerCapabilities: Advertisement.Capabilities = []
    /// On a v2 link: the secret both sides derive each UWB session's STS values from, so they
    /// never cross the air. Nil on a v1 link, whose STS values travel in `rangingParameters`.
    private var rangingSecret: [UInt8]?
    /// Our board runs provisioned STS (SESSION_KEY).
    private let boardRunsProvisionedSTS: Bool
    /// This link's one-to-one sessions use provisioned STS: the controller decides (both boards
    /// can, the peer's as its private advert says) and says so in its `hello`.
    private var provisionedSTS = false
    private(set) var stage: Stage = .discovered
    private(set) var name = ""
    private var address: BLEAddress?
    /// The UWB short address the peer advertises: what we propose as controller. Ranges are
    /// matched against the agreed session's address instead, because a controlee may never have
    /// heard its controller's advert (it learns of it from the controller's `hello`).
    private var advertisedUWBAddress: UInt16?
    /// When the peer was last heard by BLE, or (as of the last tick) measured by UWB.
    private var lastHeard: Int64
    private var random: SplitMix64
    private var uwb = UWB.idle
    private var exchange: Exchange?
    /// UWB sessions that failed to start in a row, and when the next attempt may be made.
    private var uwbFailures = 0
    private var uwbRetryAt: Int64 = 0
    /// Parameters we proposed as controller, until the peer accepts them, and when they last went out.
    private var pendingParameters: PeerMessage.RangingParameters?
    private var parametersSentAt: Int64 = 0
    /// When our outgoing connection attempt began.
    private var connectStartedAt: Int64 = 0
    /// The one-to-many session we reserved a place in as this peer's controller, until ranging ends.
    private var sharedSession: UInt32?
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

    /// The time of the input being handled.
    private var now: Int64 = 0
    /// What the input being handled asks for.
    private var actions: [PeerAction] = []

    /// `name` is the one `peer.found` reported (the advert's; empty for a v2 peer).
    init(
        peer: PeerID, name: String = "", identity: NodeIdentity, config: BridgeConfig, boardRunsProvisionedSTS: Bool = false,
        seed: UInt64, granted: Bool, now: Int64
    ) {
        self.peer = peer
        self.name = name
        self.boardRunsProvisionedSTS = boardRunsProvisionedSTS
        self.identity = identity
        self.config = config
        self.controlsSharedSessions = config.controleesPerSession > 1
        self.random = SplitMix64(seed: seed)
        self.lastHeard = now
        self.lastMessageAt = now
        self.granted = granted
        self.now = now
    }

    private var isInitiator: Bool { identity.peerID < peer }
    /// The side that decides each profile drop: the UWB controller.
    private var decides: Bool { isInitiator }
    private var isClose: Bool { (rough.rssi ?? -.infinity) >= RangingScheduler.closeRSSI }

    var link: LinkID? {
        switch stage {
        case .discovered: nil
        case .connecting(let link), .negotiating(let link), .ranging(let link): link
        }
    }

    /// Handles one input at time `now` and returns what it asks for, in order.
    mutating func receive(_ input: PeerInput, now: Int64) -> [PeerAction] {
        self.now = now
        actions = []
        switch input {
        case .heard(let advert, let name, let address, let rssi): heard(advert, name: name, address: address, rssi: rssi)
        case .connectStarted(let link):
            stage = .connecting(link)
            connectStartedAt = now
            actions.append(.bindLink(link))
        case .connectFailed(let error): log(.warning, "connect failed", ["error": "\(error)"])
        case .outgoingLinkOpened(let link, let secret): outgoingLinkOpened(link, rangingSecret: secret)
        case .incomingHello(let link, let hello, let retryAfter, let secret):
            incomingHello(link, hello, retryAfter: retryAfter, rangingSecret: secret)
        case .message(let message, let link, let proximity): receive(message, on: link, proximity: proximity)
        case .linkClosed(let link):
            if self.link == link { linkClosed() }
        case .sharedPlaceReserved(let parameters): sharedPlaceReserved(parameters)
        case .granted:
            granted = true
            connectIfInitiator()
        case .revoked(let retryAfter): revoke(retryAfter: retryAfter)
        case .contact(let distance): contactDetected(distance: distance)
        case .uwbStarted(let sessionID, let token): uwbStarted(sessionID: sessionID, token: token)
        case .uwbFailed(let sessionID, let error): uwbFailed(sessionID: sessionID, error: error)
        case .uwbSessionEnded(let reason): uwbSessionEnded(reason: reason)
        case .uwbLost:
            // The board's sessions are gone; nothing to stop. Ranging resumes when it is back; a
            // session being opened fails and is handled as any failure.
            if case .running(let request, _) = uwb {
                uwb = .opening(request)
                actions.append(.route(nil))
            }
        case .uwbBack:
            // A board that was reset is a fresh start: starts that failed before it went away
            // say nothing about it, so a peer backing off tries again now.
            uwbFailures = 0
            uwbRetryAt = now
            resumeUWB()
        case .tick(let proximity): tick(proximity)
        case .close(let sayGoodbye): close(sayGoodbye: sayGoodbye)
        }
        return actions
    }

    private mutating func log(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata = [:]) {
        actions.append(.log(level, message, metadata))
    }

    private mutating func send(_ message: PeerMessage, on link: LinkID) {
        actions.append(.send(message, on: link))
    }

    // MARK: Discovery

    private mutating func heard(_ advert: Advertisement, name: String?, address: BLEAddress, rssi: Int) {
        lastHeard = now
        self.address = address
        advertisedUWBAddress = advert.uwbShortAddress
        peerCapabilities = advert.capabilities
        if let name { self.name = name }
        if rough.add(rssi), !granted { reportRough() }
        connectIfInitiator()
    }

    private mutating func reportRough() {
        guard let rssi = rough.rssi, let band = rough.band else { return }
        let eventBand: Event.Rough.Band =
            switch band {
            case .near: .near
            case .medium: .medium
            case .far: .far
            }
        actions.append(.emit(.rough(.init(peer: peer.description, rssi: Int(rssi.rounded()), band: eventBand))))
    }

    /// Whether a `busy` still holds us back: until its time, unless the peer came close since.
    private var mayRange: Bool {
        guard let retry else { return true }
        return now >= retry.at || (isClose && !retry.wasClose)
    }

    /// Starts the connection if this side is the initiator, holds a ranging session and nothing
    /// is under way.
    private mutating func connectIfInitiator() {
        guard isInitiator, granted, mayRange, stage == .discovered, let address else { return }
        actions.append(.connect(address))
    }

    /// Our outgoing link is up: introduce ourselves and propose the ranging parameters. A link
    /// we gave up on (see `connectTimeoutMilliseconds`) that opens after all is being closed.
    private mutating func outgoingLinkOpened(_ link: LinkID, rangingSecret: [UInt8]?) {
        guard stage == .connecting(link), let advertisedUWBAddress else { return }
        stage = .negotiating(link)
        self.rangingSecret = rangingSecret
        provisionedSTS = rangingSecret != nil && !sharesSession && boardRunsProvisionedSTS && peerCapabilities.contains(.provisionedSTS)
        if sharesSession {
            actions.append(.reserveSharedPlace(controlee: advertisedUWBAddress))
            return
        }
        let sessionID = UInt32.random(in: 1...UInt32.max, using: &random)
        let parameters = PeerMessage.RangingParameters(
            sessionID: sessionID,
            channel: config.uwb.channel,
            preambleCodeIndex: config.uwb.preambleCodeIndex,
            controllerAddress: identity.uwbShortAddress,
            controleeAddress: advertisedUWBAddress,
            vendorID: UInt16.random(in: 1...UInt16.max, using: &random),
            staticSTSIV: (0..<6).map { _ in UInt8.random(in: 0...255, using: &random) },
            rangingIntervalMilliseconds: config.uwb.rangingIntervalMilliseconds)
        pendingParameters = rangingSecret.map { Self.withDerivedSTS(parameters, $0) } ?? parameters
        proposeParameters(on: link)
    }

    /// Whether this peer, as our controlee, joins one of our one-to-many sessions.
    var sharesSession: Bool { controlsSharedSessions && peerCapabilities.contains(.oneToMany) }

    /// A one-to-one session's STS values as both sides derive them on a v2 link.
    static func withDerivedSTS(_ parameters: PeerMessage.RangingParameters, _ secret: [UInt8]) -> PeerMessage.RangingParameters {
        var parameters = parameters
        let keys = RangingKeys(rangingSecret: secret, sessionID: parameters.sessionID)
        parameters.vendorID = keys.vendorID
        parameters.staticSTSIV = keys.staticSTSIV
        return parameters
    }

    private mutating func sharedPlaceReserved(_ parameters: PeerMessage.RangingParameters) {
        guard case .negotiating(let link) = stage else {
            actions.append(.closeUWB)  // the link closed in between: give the place back
            return
        }
        sharedSession = parameters.sessionID
        pendingParameters = parameters
        proposeParameters(on: link)
    }

    /// Sends `hello` and the pending parameters; repeated from `tick` until they are accepted, so
    /// a lost message delays ranging instead of stopping it.
    private mutating func proposeParameters(on link: LinkID) {
        guard let parameters = pendingParameters else { return }
        parametersSentAt = now
        send(.hello(hello), on: link)
        send(.rangingParameters(parameters), on: link)
    }

    /// A peer connected to us and introduced itself. Without a ranging session for it now, it
    /// is told `busy` and the link is closed.
    private mutating func incomingHello(_ link: LinkID, _ hello: PeerMessage.Hello, retryAfter: Int64, rangingSecret: [UInt8]?) {
        if self.link != nil { close(sayGoodbye: false) }
        lastHeard = now
        learnName(hello.name)
        self.rangingSecret = rangingSecret
        provisionedSTS = rangingSecret != nil && hello.capabilities.contains(.provisionedSTS)
        if provisionedSTS, !boardRunsProvisionedSTS {
            log(.warning, "the controller asks for provisioned STS, which this board does not run; ranging will fail")
        }
        guard granted else {
            refuse(link, retryAfter: retryAfter)
            return
        }
        retry = nil
        stage = .negotiating(link)
        actions.append(.bindLink(link))
        send(.hello(self.hello), on: link)
    }

    /// Tells the peer we have no session for it and closes the link.
    private mutating func refuse(_ link: LinkID, retryAfter: Int64) {
        let retryAfter = retryDelay(retryAfter, margin: 6)
        retry = (now + retryAfter, isClose)
        send(.busy(retryAfterMilliseconds: UInt16(clamping: retryAfter)), on: link)
        actions.append(.disconnect(link))
    }

    // MARK: Ranging schedule

    /// The scheduler takes the session away (rotation): the UWB session ends and the link closes;
    /// the initiator is asked to wait `retryAfter` before coming back.
    private mutating func revoke(retryAfter: Int64) {
        granted = false
        reportRough()
        guard let link else { return }
        if isInitiator {
            retry = (now + retryDelay(retryAfter), isClose)
            actions.append(.disconnect(link))
        } else {
            refuse(link, retryAfter: retryAfter)
        }
        linkClosed()
    }

    /// A close peer may bump any moment: it comes back within a second, and the scheduler's
    /// rotation decides; the others wait as long as the scheduler says. Both sides apply this,
    /// each with its own reading of the signal, with 6 dB to spare on the side that says `busy`
    /// so that a peer the other side already finds close is not sent away for long.
    private func retryDelay(_ retryAfter: Int64, margin: Double = 0) -> Int64 {
        (rough.rssi ?? -.infinity) >= RangingScheduler.closeRSSI - margin ? min(retryAfter, 1_000) : retryAfter
    }

    /// The name from the peer's `hello`, reported when it is news: a v2 peer's advert has none.
    private mutating func learnName(_ helloName: String) {
        guard helloName != name else { return }
        name = helloName
        if !name.isEmpty { actions.append(.emit(.peerNamed(.init(peer: peer.description, name: name)))) }
    }

    private var hello: PeerMessage.Hello {
        .init(
            peerID: identity.peerID, group: identity.group, name: identity.name, versions: 0b11,
            capabilities: isInitiator && provisionedSTS ? [.oneToMany, .provisionedSTS] : [.oneToMany])
    }

    /// How a one-to-one session on this link keys its STS: provisioned with the session key both
    /// sides derive, when the controller said so; otherwise static with the parameters' values.
    private func sts(for parameters: PeerMessage.RangingParameters) -> SessionSTS {
        guard provisionedSTS, parameters.oneToManySlots == nil, let rangingSecret else { return .fromParameters }
        return .provisioned(sessionKey: RangingKeys(rangingSecret: rangingSecret, sessionID: parameters.sessionID).sessionKey)
    }

    // MARK: Peer messages

    private mutating func receive(_ message: PeerMessage, on link: LinkID, proximity: ProximityView) {
        lastHeard = now
        lastMessageAt = now
        guard link == self.link else { return violation("message on a link this peer no longer uses", on: link) }
        switch message {
        case .hello(let hello):
            learnName(hello.name)
        case .rangingParameters(var parameters):
            if let rangingSecret, parameters.oneToManySlots == nil { parameters = Self.withDerivedSTS(parameters, rangingSecret) }
            guard !isInitiator else { return violation("the controller sent ranging parameters to the controller", on: link) }
            guard parameters.controleeAddress == identity.uwbShortAddress else {
                return violation(
                    "parameters name UWB address \(parameters.controleeAddress), ours is \(identity.uwbShortAddress)", on: link)
            }
            switch uwb {
            case .running(let request, _) where request.parameters.sessionID == parameters.sessionID:
                // A repeat: our acceptance was lost. Answer again.
                send(.parametersAccepted(sessionID: parameters.sessionID), on: link)
            case .opening(let request) where request.parameters.sessionID == parameters.sessionID:
                break  // accepted once the session runs
            case _ where now < uwbRetryAt:
                break  // backing off after failed starts: a later repeat is accepted
            default:
                // A new proposal replaces the session.
                stopUWB()
                openUWB(UWBSessionRequest(parameters: parameters, asController: false, shared: false, sts: sts(for: parameters)))
            }
        case .parametersAccepted(let accepted):
            if uwb.sessionID == accepted { return }  // a repeated acceptance
            guard let parameters = pendingParameters, parameters.sessionID == accepted, case .negotiating = stage else {
                return violation("acceptance of unknown session \(accepted)", on: link)
            }
            pendingParameters = nil
            openUWB(
                UWBSessionRequest(parameters: parameters, asController: true, shared: sharedSession != nil, sts: sts(for: parameters)))
        case .card(let bumpID, let cardJSON):
            receivedCard(bumpID: bumpID, json: cardJSON, on: link, proximity: proximity)
        case .cardAck(let bumpID):
            if exchange?.bumpID == bumpID {
                exchange?.ownCardAcked = true
                completeExchangeIfDone(on: link)
            }
        case .cardDecline(let bumpID):
            if let current = exchange, current.bumpID == bumpID {
                endExchange(current, reason: "the peer declined it")
            } else if bumpID > lastBumpID {
                // A drop we never joined: keep bump ids in step.
                lastDrop = (bumpID, false)
            }
        case .goodbye:
            actions.append(.end(.peerEnded))
        case .busy(let retryAfter):
            retry = (now + retryDelay(Int64(retryAfter)), isClose)
            actions.append(.disconnect(link))
            linkClosed()
        }
    }

    /// Closes a link whose peer broke the protocol; the peer keeps its registry entry.
    private mutating func violation(_ reason: String, on link: LinkID) {
        log(.warning, "closing link", ["link": "\(link)", "reason": "\(reason)"])
        actions.append(.disconnect(link))
        if link == self.link { linkClosed() } else { actions.append(.unbindLink(link)) }
    }

    private mutating func linkClosed() {
        if let link { actions.append(.unbindLink(link)) }
        stage = .discovered
        rangingSecret = nil
        if let current = exchange { endExchange(current, reason: "the link closed") }
        pendingParameters = nil
        stopUWB()
    }

    // MARK: UWB

    private mutating func openUWB(_ request: UWBSessionRequest) {
        uwb = .opening(request)
        actions.append(.openUWB(request))
    }

    private mutating func stopUWB() {
        guard uwb != .idle || sharedSession != nil else { return }
        if case .running = uwb { actions.append(.route(nil)) }
        uwb = .idle
        sharedSession = nil
        actions.append(.closeUWB)
    }

    private mutating func uwbStarted(sessionID: UInt32, token: UInt32) {
        guard case .opening(let request) = uwb, request.parameters.sessionID == sessionID else { return }  // given up since
        uwb = .running(request, token: token)
        uwbFailures = 0
        let parameters = request.parameters
        actions.append(
            .route(UWBRoute(token: token, peerAddress: request.asController ? parameters.controleeAddress : parameters.controllerAddress)))
        log(.info, "ranging", ["role": "\(request.asController ? "controller" : "controlee")", "session": "\(sessionID)"])
        guard case .negotiating(let link) = stage else { return }  // resumed after the board came back
        stage = .ranging(link)
        if !request.asController { send(.parametersAccepted(sessionID: sessionID), on: link) }
    }

    /// How long to wait after `failures` failed starts in a row before trying again: 1 s, then
    /// doubling up to 30 s. A board that refuses every SESSION_INIT is asked a few times a
    /// minute, not five times a second; ranging resumes at the next attempt once it works again.
    static func uwbRetryDelay(afterFailures failures: Int) -> Int64 {
        min(30_000, 1_000 << min(max(failures - 1, 0), 5))
    }

    private mutating func uwbFailed(sessionID: UInt32, error: String) {
        guard case .opening(let request) = uwb, request.parameters.sessionID == sessionID else { return }
        uwbFailures += 1
        uwbRetryAt = now + Self.uwbRetryDelay(afterFailures: uwbFailures)
        log(.error, "could not start the UWB session", ["error": "\(error)", "retry in ms": "\(uwbRetryAt - now)"])
        uwb = .idle
        switch stage {
        case .negotiating where request.asController:
            // Propose again once the back-off allows: the controlee's answer restarts the attempt.
            pendingParameters = request.parameters
        case .negotiating:
            break  // the controller repeats its proposal until we accept
        case .ranging(let link):
            // Ranging could not resume on a board that came back: start over with a new session.
            actions.append(.disconnect(link))
            linkClosed()
        case .discovered, .connecting:
            break
        }
    }

    /// The board is back: restart the session of a peer we were ranging with. The peer kept its
    /// side running, so ranging resumes without a new negotiation.
    private mutating func resumeUWB() {
        guard case .ranging = stage, case .opening(let request) = uwb else { return }
        actions.append(.openUWB(request))
    }

    /// The UWBS ended our session on its own: start over from discovery.
    private mutating func uwbSessionEnded(reason: ReasonCode) {
        log(.warning, "UWB session ended by the device", ["reason": "\(reason)"])
        if let link { actions.append(.disconnect(link)) }
        linkClosed()
    }

    // MARK: Profile drop
    //
    // Exactly one bump on each side per gesture, or none on either, over a link that loses
    // messages (docs/PROTOCOL.md). The UWB controller decides every drop: it acknowledges the
    // controlee's card only once it holds the ack of its own (then it reports the bump), or
    // declines the drop when its deadline passes. The controlee never gives up on its own while
    // the controller can still be heard; it repeats its card until the decision reaches it. Every
    // message may arrive twice, so every answer is idempotent.

    /// Proximity saw a contact in this peer's ranges: start a profile drop, unless one is under way.
    private mutating func contactDetected(distance: Double) {
        guard exchange == nil, case .ranging(let link) = stage else { return }
        let bumpID = lastBumpID &+ 1
        log(.info, "profile drop started", ["bump": "\(bumpID)"])
        exchange = Exchange(bumpID: bumpID, startedAt: now, distance: distance, cardSentAt: now)
        send(.card(bumpID: bumpID, cardJSON: identity.card.json), on: link)
    }

    private mutating func receivedCard(bumpID: UInt32, json: String, on link: LinkID, proximity: ProximityView) {
        if let last = lastDrop, bumpID <= last.bumpID {
            // The peer repeats a drop that has ended here: our answer was lost. Answer again.
            if bumpID == last.bumpID {
                send(last.completed ? .cardAck(bumpID: bumpID) : .cardDecline(bumpID: bumpID), on: link)
            }
            return
        }
        if let current = exchange, bumpID < current.bumpID { return }  // the peer will follow our higher id
        let card: ProfileCard
        do {
            card = try ProfileCard(json: json)
        } catch {
            // A card we could not show ends the drop on both sides without a bump, at once: the
            // decline tells the peer, which would otherwise repeat it until its timer gives up.
            log(.warning, "declining a profile drop with an invalid card", ["bump": "\(bumpID)", "error": "\(error)"])
            exchange = nil
            lastDrop = (bumpID, false)
            send(.cardDecline(bumpID: bumpID), on: link)
            return
        }
        if var current = exchange {
            if bumpID > current.bumpID {
                // Both started; the higher id wins and both converge on it.
                current = Exchange(bumpID: bumpID, startedAt: current.startedAt, distance: current.distance, cardSentAt: now)
                send(.card(bumpID: bumpID, cardJSON: identity.card.json), on: link)
            }
            current.peerCard = card.json
            exchange = current
        } else {
            // The peer saw the contact first. Join, unless this gesture already had its bump.
            guard proximity.contactArmed else {
                log(.info, "declining a second profile drop in one gesture", ["bump": "\(bumpID)"])
                lastDrop = (bumpID, false)
                send(.cardDecline(bumpID: bumpID), on: link)
                return
            }
            actions.append(.consumeContact)
            log(.info, "profile drop joined", ["bump": "\(bumpID)"])
            exchange = Exchange(bumpID: bumpID, startedAt: now, peerCard: card.json, distance: proximity.filtered, cardSentAt: now)
            send(.card(bumpID: bumpID, cardJSON: identity.card.json), on: link)
        }
        // The controlee acknowledges at once: the controller learns that we hold its card. The
        // controller's acknowledgement is its decision, sent when the drop completes.
        if !decides { send(.cardAck(bumpID: bumpID), on: link) }
        completeExchangeIfDone(on: link)
    }

    private mutating func completeExchangeIfDone(on link: LinkID) {
        guard let current = exchange, let card = current.peerCard, current.ownCardAcked else { return }
        exchange = nil
        lastDrop = (current.bumpID, true)
        actions.append(.emit(.bump(.init(peer: peer.description, bumpID: current.bumpID, distance: current.distance, cardJSON: card))))
        if decides { send(.cardAck(bumpID: current.bumpID), on: link) }
    }

    private mutating func endExchange(_ current: Exchange, reason: String) {
        log(.warning, "profile drop ended without a bump", ["bump": "\(current.bumpID)", "reason": "\(reason)"])
        exchange = nil
        lastDrop = (current.bumpID, false)
    }

    // MARK: Time

    /// Repeats unanswered messages and applies the deadlines, and reports what the scheduler
    /// needs, including whether the peer has been silent for longer than the peer timeout.
    private mutating func tick(_ proximity: ProximityView) {
        if let measured = proximity.lastMeasuredAt { lastHeard = max(lastHeard, measured) }
        if case .connecting(let link) = stage, now - connectStartedAt >= config.connectTimeoutMilliseconds {
            log(.warning, "connection attempt timed out; trying again at the next advert", ["link": "\(link)"])
            stage = .discovered
            actions.append(.disconnect(link))
            actions.append(.unbindLink(link))
        }
        if case .negotiating(let link) = stage, pendingParameters != nil, now - parametersSentAt >= config.retransmitMilliseconds,
            now >= uwbRetryAt
        {
            proposeParameters(on: link)
        }
        if let current = exchange, let link {
            if decides, now - current.startedAt > config.exchangeTimeoutMilliseconds {
                endExchange(current, reason: "no answer before the deadline")
                send(.cardDecline(bumpID: current.bumpID), on: link)
            } else if !decides, now - max(lastMessageAt, current.startedAt) > 4 * config.exchangeTimeoutMilliseconds {
                // The controller decides within its deadline and answers every card after it; this
                // long a silence means the link is gone. Tell it, in case it still can hear us.
                endExchange(current, reason: "the peer fell silent")
                send(.cardDecline(bumpID: current.bumpID), on: link)
            } else if !decides || !current.ownCardAcked, now - current.cardSentAt >= config.retransmitMilliseconds {
                exchange?.cardSentAt = now
                send(.card(bumpID: current.bumpID, cardJSON: identity.card.json), on: link)
            }
        }
        let isRanging = if case .ranging = stage { true } else { false }
        actions.append(
            .report(
                SessionReport(
                    timedOut: now - lastHeard > config.peerTimeoutMilliseconds,
                    holdsPriority: proximity.isNear || exchange != nil, rssi: rough.rssi, isRanging: isRanging,
                    available: mayRange, lastHeard: lastHeard, sharedSession: sharedSession)))
    }

    /// Ends everything with this peer; best effort, since the peer may have left the air already.
    private mutating func close(sayGoodbye: Bool) {
        if let link {
            if sayGoodbye { send(.goodbye, on: link) }
            actions.append(.disconnect(link))
        }
        linkClosed()
    }
}
