import BLE
import Events
import Logging
import PeerProtocol
import PeerSecurity
import UCI

/// One peer's side of the peer protocol (docs/PROTOCOL.md) as a pure state machine:
/// `receive(input, now:) -> [PeerAction]`, no I/O, no clock of its own.
///
/// Lifecycle: discovered (advert or hello) -> role fixed by comparing peer ids (the lower id
/// connects and is the UWB controller) -> parameters agreed over the link -> UWB session
/// configured and started -> ranges feed proximity -> contact starts a profile drop -> lost.
///
/// Shaped like swift-nio's typed state machines: `State` holds in each case exactly what is
/// valid in it (`PeerMachine+State.swift`), each input has its own handler answering in its own
/// small action type (`PeerMachine+Actions.swift`), and `receive` flattens the answer. What
/// outlives a link (what the adverts said, the back-off, the last drop) is a stored property.
struct PeerMachine: Sendable {
    /// `State` without its data, for those who only ask where the machine is.
    enum Stage: Equatable, Sendable {
        case discovered
        case connecting(LinkID)
        case negotiating(LinkID)
        case ranging(LinkID)
    }

    let peer: PeerID
    let identity: NodeIdentity
    let config: BridgeConfig
    /// Whether sessions we control are one-to-many (`controleesPerSession` > 1); used only with
    /// peers that advertise they can join one.
    private let controlsSharedSessions: Bool
    /// Our board runs provisioned STS (SESSION_KEY).
    private let boardRunsProvisionedSTS: Bool
    /// Our board hops rounds and the profile lets one-to-one sessions hop.
    private let boardHopsRounds: Bool
    private var state = State.discovered
    private(set) var name = ""
    /// What the peer's last advert said: what we propose as controller. Ranges are matched
    /// against the agreed session's address instead, because a controlee may never have heard
    /// its controller's advert (it learns of it from the controller's `hello`).
    private var advertised: (uwbAddress: UInt16, capabilities: Advertisement.Capabilities)?
    /// Where the adverts came from, and which address proved itself: where to connect.
    private var addresses = PeerAddresses()
    /// The address of the `.connect` last asked for, until the adapter takes or refuses it.
    private var askedToConnect: BLEAddress?
    /// When the peer was last heard by BLE, or (as of the last tick) measured by UWB.
    private var lastHeard: Int64
    /// When the peer last sent any message.
    private(set) var lastMessageAt: Int64
    private var random: SplitMix64
    /// UWB sessions that failed to start in a row, and when the next attempt may be made.
    private var uwbFailures = 0
    private var uwbRetryAt: Int64 = 0
    /// The last profile drop that ended with this peer and whether it produced a bump: the answer
    /// to a retransmitted card. The next gesture uses the id after it.
    var lastDrop: (bumpID: UInt32, completed: Bool)?
    var lastBumpID: UInt32 { lastDrop?.bumpID ?? 0 }
    /// Whether the node's scheduler gives this peer one of the radio's ranging sessions.
    /// Without one the peer is still tracked, with rough proximity from its adverts.
    private(set) var granted: Bool
    private var rough = RoughProximity()
    /// After a `busy` (sent or received): no ranging before this time, unless the peer came
    /// close since (its adverts got as strong as the scheduler's `closeRSSI`). Both sides hear
    /// about the same signal strength, so both let it through about the same time.
    private var retry: (at: Int64, wasClose: Bool)?
    /// The time of the input being handled.
    private(set) var now: Int64

    /// `name` is the one `peer.found` reported (the advert's; empty for a v2 peer).
    init(
        peer: PeerID, name: String = "", identity: NodeIdentity, config: BridgeConfig, boardRunsProvisionedSTS: Bool = false,
        boardHopsRounds: Bool = false, seed: UInt64, granted: Bool, now: Int64
    ) {
        self.peer = peer
        self.name = name
        self.boardRunsProvisionedSTS = boardRunsProvisionedSTS
        self.boardHopsRounds = boardHopsRounds
        self.identity = identity
        self.config = config
        self.controlsSharedSessions = config.controleesPerSession > 1
        self.random = SplitMix64(seed: seed)
        self.lastHeard = now
        self.lastMessageAt = now
        self.granted = granted
        self.now = now
    }

    var stage: Stage {
        switch state {
        case .discovered: .discovered
        case .connecting(let connecting): .connecting(connecting.link)
        case .negotiating(let negotiating): .negotiating(negotiating.link.id)
        case .ranging(let ranging): .ranging(ranging.link.id)
        }
    }

    // Never inlined: Swift 6.3.1's optimizer (CopyPropagation) ends the borrow of `state` too early
    // where this switch is inlined into the handlers, and the compiler stops on its own
    // ownership check ("found outside of lifetime use") in release builds.
    @inline(never)
    var link: LinkID? {
        switch state {
        case .discovered: nil
        case .connecting(let connecting): connecting.link
        case .negotiating(let negotiating): negotiating.link.id
        case .ranging(let ranging): ranging.link.id
        }
    }

    /// Where our connect under way on `link` goes, if it is one.
    func attemptAddress(of link: LinkID) -> BLEAddress? {
        guard case .connecting(let connecting) = state, connecting.link == link else { return nil }
        return connecting.address
    }

    private var isInitiator: Bool { identity.peerID < peer }
    /// The side that decides each profile drop: the UWB controller.
    var decides: Bool { isInitiator }
    private var isClose: Bool { (rough.rssi ?? -.infinity) >= RangingScheduler.closeRSSI }

    /// Handles one input at time `now` and returns what it asks for, in order.
    mutating func receive(_ input: PeerInput, now: Int64) -> [PeerAction] {
        self.now = now
        var actions: [PeerAction] = []
        switch input {
        case .heard(let advert, let name, let address, let rssi):
            heard(advert, name: name, address: address, rssi: rssi).append(to: &actions)
        case .connectStarted(let link): connectStarted(link).append(to: &actions)
        case .connectFailed(let error): connectFailed(error).append(to: &actions)
        case .handshakeStarted(let link): handshakeStarted(link)
        case .outgoingLinkOpened(let link, let secret): outgoingLinkOpened(link, rangingSecret: secret).append(to: &actions)
        case .incomingHello(let link, let hello, let retryAfter, let secret):
            incomingHello(link, hello, retryAfter: retryAfter, rangingSecret: secret).append(to: &actions)
        case .message(let message, let link, let proximity): receive(message, on: link, proximity: proximity).append(to: &actions)
        case .linkClosed(let link): linkClosed(link).append(to: &actions)
        case .refused(let link): linkClosed(link, refused: true).append(to: &actions)
        case .sharedPlaceReserved(let parameters): sharedPlaceReserved(parameters).append(to: &actions)
        case .granted: grant().append(to: &actions)
        case .revoked(let retryAfter): revoke(retryAfter: retryAfter).append(to: &actions)
        case .contact(let distance): contact(distance: distance).append(to: &actions)
        case .uwbStarted(let sessionID, let token): uwbStarted(sessionID: sessionID, token: token).append(to: &actions)
        case .uwbFailed(let sessionID, let error): uwbFailed(sessionID: sessionID, error: error).append(to: &actions)
        case .uwbSessionEnded(let reason): uwbSessionEnded(reason: reason).append(to: &actions)
        case .uwbLost: uwbLost().append(to: &actions)
        case .uwbBack: uwbBack().append(to: &actions)
        case .tick(let proximity): tick(proximity).append(to: &actions)
        case .close(let sayGoodbye): endLink(disconnect: true, farewell: sayGoodbye ? .goodbye : nil).append(to: &actions)
        }
        return actions
    }

    // MARK: Discovery

    private mutating func heard(_ advert: Advertisement, name: String?, address: BLEAddress, rssi: Int) -> [HeardAction] {
        addresses.heard(address, rssi: rssi, at: now)
        // An advert from an address that refused us is not the peer being here: a departed
        // bridge's kernel, or a replayer, keeps sending it.
        if !addresses.refusedLast(address) { lastHeard = now }
        advertised = (advert.uwbShortAddress, advert.capabilities)
        if let name { self.name = name }
        var actions: [HeardAction] = []
        if rough.add(rssi), !granted, let report = roughReport { actions.append(.rough(report)) }
        if let address = connectIfDue() { actions.append(.connect(address)) }
        return actions
    }

    private var roughReport: Event.Rough? {
        guard let rssi = rough.rssi, let band = rough.band else { return nil }
        let eventBand: Event.Rough.Band =
            switch band {
            case .near: .near
            case .medium: .medium
            case .far: .far
            }
        return .init(peer: peer.description, rssi: Int(rssi.rounded()), band: eventBand)
    }

    /// Whether a `busy` still holds us back: until its time, unless the peer came close since.
    private var mayRange: Bool {
        guard let retry else { return true }
        return now >= retry.at || (isClose && !retry.wasClose)
    }

    /// Where to connect, if this side is the initiator, holds a ranging session and nothing is
    /// under way; the address is kept for the adapter's answer.
    private mutating func connectIfDue() -> BLEAddress? {
        guard isInitiator, granted, mayRange, case .discovered = state,
            let address = addresses.best(at: now, window: config.peerTimeoutMilliseconds)
        else { return nil }
        askedToConnect = address
        return address
    }

    private mutating func grant() -> GrantedAction? {
        granted = true
        return connectIfDue().map(GrantedAction.connect)
    }

    /// The adapter took our `.connect`, which is only asked with nothing under way.
    private mutating func connectStarted(_ link: LinkID) -> ConnectStartedAction {
        guard case .discovered = state, let address = askedToConnect else { return .refuse(link) }
        askedToConnect = nil
        state = .connecting(Connecting(link: link, since: now, address: address))
        return .bind(link)
    }

    private mutating func connectFailed(_ error: String) -> LogLine {
        if let address = askedToConnect { addresses.failed(address) }
        askedToConnect = nil
        return LogLine(.warning, "connect failed", ["error": "\(error)"])
    }

    // MARK: Link set-up

    /// How long the answer to our handshake may take once the link is up: a round trip, repeated
    /// every `retransmitMilliseconds` when lost. Whoever accepts a link at a replayed advert's
    /// address and stays silent costs this, not the whole connect timeout.
    static let handshakeTimeoutMilliseconds: Int64 = 2_000

    private mutating func handshakeStarted(_ link: LinkID) {
        guard case .connecting(var connecting) = state, connecting.link == link else { return }
        connecting.handshakeSince = now
        state = .connecting(connecting)
    }

    /// Our outgoing link is up: introduce ourselves and propose the ranging parameters. A link
    /// we gave up on (see `connectTimeoutMilliseconds`) that opens after all is being closed.
    private mutating func outgoingLinkOpened(_ link: LinkID, rangingSecret: [UInt8]?) -> OutgoingLinkOpenedAction? {
        guard case .connecting(let connecting) = state, connecting.link == link, let advertised else { return nil }
        // The v2 handshake proved the address; a v1 link is proved by the peer's first answer.
        if rangingSecret != nil { addresses.proved(connecting.address) }
        let shares = controlsSharedSessions && advertised.capabilities.contains(.oneToMany)
        var open = OpenLink(
            id: link, rangingSecret: rangingSecret,
            provisionedSTS: rangingSecret != nil && !shares && boardRunsProvisionedSTS && advertised.capabilities.contains(.provisionedSTS),
            hops: rangingSecret != nil && !shares && boardHopsRounds && advertised.capabilities.contains(.roundHopping))
        if rangingSecret == nil { open.unanswered = (connecting.address, now) }
        if shares {
            state = .negotiating(Negotiating(link: open, step: .awaitingPlace))
            return .reservePlace(controlee: advertised.uwbAddress)
        }
        let sessionID = UInt32.random(in: 1...UInt32.max, using: &random)
        let parameters = PeerMessage.RangingParameters(
            sessionID: sessionID,
            channel: config.uwb.channel,
            preambleCodeIndex: config.uwb.preambleCode(session: sessionID),
            controllerAddress: identity.uwbShortAddress,
            controleeAddress: advertised.uwbAddress,
            vendorID: UInt16.random(in: 1...UInt16.max, using: &random),
            staticSTSIV: (0..<6).map { _ in UInt8.random(in: 0...255, using: &random) },
            rangingIntervalMilliseconds: config.uwb.rangingIntervalMilliseconds)
        return .propose(propose(rangingSecret.map { Self.withDerivedSTS(parameters, $0) } ?? parameters, on: open))
    }

    /// A one-to-one session's STS values as both sides derive them on a v2 link.
    private static func withDerivedSTS(_ parameters: PeerMessage.RangingParameters, _ secret: [UInt8]) -> PeerMessage.RangingParameters {
        var parameters = parameters
        let keys = RangingKeys(rangingSecret: secret, sessionID: parameters.sessionID)
        parameters.vendorID = keys.vendorID
        parameters.staticSTSIV = keys.staticSTSIV
        return parameters
    }

    /// `.sharedPlaceReserved` answers the `.reserveSharedPlace` of `outgoingLinkOpened`, once.
    private mutating func sharedPlaceReserved(_ parameters: PeerMessage.RangingParameters) -> SharedPlaceReservedAction {
        guard case .negotiating(var negotiating) = state else { return .giveBack }  // the link closed in between
        guard case .awaitingPlace = negotiating.step else {
            preconditionFailure("a place in session \(parameters.sessionID) reserved for \(peer), which asked for none")
        }
        negotiating.link.sharedSession = parameters.sessionID
        return .propose(propose(parameters, on: negotiating.link))
    }

    /// Makes `parameters` the proposal on `link` and sends it; `tick` repeats it until accepted,
    /// so a lost message delays ranging instead of stopping it.
    private mutating func propose(_ parameters: PeerMessage.RangingParameters, on link: OpenLink) -> Proposal {
        state = .negotiating(Negotiating(link: link, step: .proposing(parameters, sentAt: now)))
        return Proposal(link: link.id, hello: hello(on: link), parameters: parameters)
    }

    /// A peer connected to us and introduced itself. Without a ranging session for it now, it
    /// is told `busy` and the link is closed.
    private mutating func incomingHello(
        _ link: LinkID, _ hello: PeerMessage.Hello, retryAfter: Int64, rangingSecret: [UInt8]?
    ) -> [IncomingHelloAction] {
        var actions: [IncomingHelloAction] = []
        if let replaced = endLink(disconnect: true) { actions.append(.replace(replaced)) }
        lastHeard = now
        if let named = learnName(hello.name) { actions.append(.named(named)) }
        let provisionedSTS = rangingSecret != nil && hello.capabilities.contains(.provisionedSTS)
        if provisionedSTS, !boardRunsProvisionedSTS {
            let warning = "the controller asks for provisioned STS, which this board does not run; ranging will fail"
            actions.append(.log(LogLine(.warning, warning)))
        }
        let hops = rangingSecret != nil && hello.capabilities.contains(.roundHopping)
        if hops, !boardHopsRounds {
            let warning = "the controller asks for round hopping, which this board does not do (or the config turned off); ranging will fail"
            actions.append(.log(LogLine(.warning, warning)))
        }
        guard granted else {
            actions.append(.refuse(link, retryAfter: refuse(retryAfter: retryAfter)))
            return actions
        }
        retry = nil
        let open = OpenLink(id: link, rangingSecret: rangingSecret, provisionedSTS: provisionedSTS, hops: hops)
        state = .negotiating(Negotiating(link: open, step: .awaitingParameters))
        actions.append(.accept(link, hello: self.hello(on: open)))
        return actions
    }

    /// Waits out the `busy` we are about to send; returns its retry after.
    private mutating func refuse(retryAfter: Int64) -> UInt16 {
        let retryAfter = retryDelay(retryAfter, margin: 6)
        retry = (now + retryAfter, isClose)
        return UInt16(clamping: retryAfter)
    }

    /// A close peer may bump any moment: it comes back within a second, and the scheduler's
    /// rotation decides; the others wait as long as the scheduler says. Both sides apply this,
    /// each with its own reading of the signal, with 6 dB to spare on the side that says `busy`
    /// so that a peer the other side already finds close is not sent away for long.
    private func retryDelay(_ retryAfter: Int64, margin: Double = 0) -> Int64 {
        (rough.rssi ?? -.infinity) >= RangingScheduler.closeRSSI - margin ? min(retryAfter, 1_000) : retryAfter
    }

    /// The name from the peer's `hello`, reported when it is news: a v2 peer's advert has none.
    private mutating func learnName(_ helloName: String) -> Event.PeerNamed? {
        guard helloName != name else { return nil }
        name = helloName
        return name.isEmpty ? nil : .init(peer: peer.description, name: name)
    }

    private func hello(on link: OpenLink) -> PeerMessage.Hello {
        var capabilities: PeerMessage.Capabilities = [.oneToMany]
        if isInitiator, link.provisionedSTS { capabilities.insert(.provisionedSTS) }
        if isInitiator, link.hops { capabilities.insert(.roundHopping) }
        return .init(peerID: identity.peerID, group: identity.group, name: identity.name, versions: 0b11, capabilities: capabilities)
    }

    /// How a one-to-one session on this link keys its STS: provisioned with the session key both
    /// sides derive, when the controller said so; otherwise static with the parameters' values.
    private func sts(for parameters: PeerMessage.RangingParameters, on link: OpenLink) -> SessionSTS {
        guard link.provisionedSTS, parameters.oneToManySlots == nil, let rangingSecret = link.rangingSecret else { return .fromParameters }
        return .provisioned(sessionKey: RangingKeys(rangingSecret: rangingSecret, sessionID: parameters.sessionID).sessionKey)
    }

    // MARK: Peer messages

    private mutating func receive(_ message: PeerMessage, on link: LinkID, proximity: ProximityView) -> [MessageAction] {
        lastHeard = now
        lastMessageAt = now
        guard link == self.link else {
            return [.violation(reason: "message on a link this peer no longer uses", LinkEnd(link: link, disconnect: true))]
        }
        guard var open = openLink else { return violation("a message before the link is up") }
        if let unanswered = open.unanswered {
            addresses.proved(unanswered.address)
            open.unanswered = nil
            store(open)
        }
        switch message {
        case .hello(let hello):
            return learnName(hello.name).map { [.named($0)] } ?? []
        case .rangingParameters(var parameters):
            if let secret = open.rangingSecret, parameters.oneToManySlots == nil { parameters = Self.withDerivedSTS(parameters, secret) }
            guard !isInitiator else { return violation("the controller sent ranging parameters to the controller") }
            guard parameters.controleeAddress == identity.uwbShortAddress else {
                return violation("parameters name UWB address \(parameters.controleeAddress), ours is \(identity.uwbShortAddress)")
            }
            return proposed(parameters)
        case .parametersAccepted(let accepted):
            return parametersAccepted(accepted)
        case .card(let bumpID, let json):
            let actions = receivedCard(bumpID: bumpID, json: json, proximity: proximity, on: &open)
            store(open)
            return actions.map(MessageAction.drop)
        case .cardAck(let bumpID):
            let actions = receivedCardAck(bumpID: bumpID, on: &open)
            store(open)
            return actions.map(MessageAction.drop)
        case .cardDecline(let bumpID):
            let actions = receivedCardDecline(bumpID: bumpID, on: &open)
            store(open)
            return actions.map(MessageAction.drop)
        case .goodbye:
            return [.peerEnded]
        case .busy(let retryAfter):
            retry = (now + retryDelay(Int64(retryAfter)), isClose)
            return endLink(disconnect: true).map { [.leave($0)] } ?? []
        }
    }

    /// Closes our link, whose peer broke the protocol; the peer keeps its entry in the node.
    private mutating func violation(_ reason: String) -> [MessageAction] {
        endLink(disconnect: true).map { [.violation(reason: reason, $0)] } ?? []
    }

    /// The controller's parameters reach the controlee: a new session replaces whatever ran.
    private mutating func proposed(_ parameters: PeerMessage.RangingParameters) -> [MessageAction] {
        func request(_ link: OpenLink) -> UWBSessionRequest {
            UWBSessionRequest(
                parameters: parameters, asController: false, shared: false, sts: sts(for: parameters, on: link),
                hops: link.hops && parameters.oneToManySlots == nil)
        }
        switch state {
        case .ranging(var ranging):
            if ranging.session.parameters.sessionID == parameters.sessionID {
                // A repeat: our acceptance was lost. Answer again once the session runs.
                return ranging.token == nil ? [] : [.acceptAgain(sessionID: parameters.sessionID, on: ranging.link.id)]
            }
            guard now >= uwbRetryAt else { return [] }  // backing off after failed starts: a later repeat is accepted
            let release = MessageAction.releaseSession(unroute: ranging.token != nil)
            ranging.link.sharedSession = nil
            ranging.session = request(ranging.link)
            ranging.token = nil
            state = .ranging(ranging)
            return [release, .startSession(ranging.session)]
        case .negotiating(var negotiating):
            if negotiating.starting?.parameters.sessionID == parameters.sessionID { return [] }  // accepted once the session runs
            guard now >= uwbRetryAt else { return [] }
            let holds = negotiating.starting != nil || negotiating.link.sharedSession != nil
            negotiating.link.sharedSession = nil
            let started = request(negotiating.link)
            negotiating.step = .accepting(started)
            state = .negotiating(negotiating)
            return (holds ? [.releaseSession(unroute: false)] : []) + [.startSession(started)]
        case .discovered, .connecting:
            preconditionFailure("parameters handled without an open link")
        }
    }

    private mutating func parametersAccepted(_ accepted: UInt32) -> [MessageAction] {
        if sessionID == accepted { return [] }  // a repeated acceptance
        guard case .negotiating(var negotiating) = state, case .proposing(let parameters, let sentAt) = negotiating.step,
            parameters.sessionID == accepted
        else { return violation("acceptance of unknown session \(accepted)") }
        let request = UWBSessionRequest(
            parameters: parameters, asController: true, shared: negotiating.link.sharedSession != nil,
            sts: sts(for: parameters, on: negotiating.link), hops: negotiating.link.hops && parameters.oneToManySlots == nil)
        negotiating.step = .starting(request, proposedAt: sentAt)
        state = .negotiating(negotiating)
        return [.startSession(request)]
    }

    // MARK: Links

    /// The open link's data, when there is one.
    private var openLink: OpenLink? {
        switch state {
        case .negotiating(let negotiating): negotiating.link
        case .ranging(let ranging): ranging.link
        case .discovered, .connecting: nil
        }
    }

    /// Puts back the open link's data, taken out with `openLink` to be changed.
    private mutating func store(_ open: OpenLink) {
        switch state {
        case .negotiating(var negotiating) where negotiating.link.id == open.id:
            negotiating.link = open
            state = .negotiating(negotiating)
        case .ranging(var ranging) where ranging.link.id == open.id:
            ranging.link = open
            state = .ranging(ranging)
        default:
            preconditionFailure("link \(open.id)'s data stored in \(stage)")
        }
    }

    /// `refused`: the handshake failed, which backs the address off (`PeerAddresses.refused`).
    private mutating func linkClosed(_ link: LinkID, refused: Bool = false) -> LinkEnd? {
        guard link == self.link else { return nil }
        // Closed before it opened (refused, or a handshake that failed): counts against the address.
        if case .connecting(let connecting) = state {
            if refused { addresses.refused(connecting.address, at: now) } else { addresses.failed(connecting.address) }
        }
        return endLink(disconnect: false)
    }

    /// Ends our link, if any, and everything on it: back to discovered. `sessionGone`: the board
    /// already dropped the session, so there is none to stop.
    private mutating func endLink(disconnect: Bool, farewell: PeerMessage? = nil, sessionGone: Bool = false) -> LinkEnd? {
        let open: OpenLink
        var end: LinkEnd
        switch state {
        case .discovered:
            return nil
        case .connecting(let connecting):
            state = .discovered
            return LinkEnd(link: connecting.link, farewell: farewell, disconnect: disconnect)
        case .negotiating(let negotiating):
            open = negotiating.link
            end = LinkEnd(
                link: open.id, farewell: farewell, disconnect: disconnect, releaseUWB: !sessionGone && negotiating.starting != nil)
        case .ranging(let ranging):
            open = ranging.link
            end = LinkEnd(
                link: open.id, farewell: farewell, disconnect: disconnect, unroute: !sessionGone && ranging.token != nil,
                releaseUWB: !sessionGone)
        }
        state = .discovered
        if let exchange = open.exchange {
            end.abandonedDrop = exchange.bumpID
            lastDrop = (exchange.bumpID, false)
        }
        if open.sharedSession != nil { end.releaseUWB = true }
        return end
    }

    // MARK: Ranging schedule

    /// The scheduler takes the session away (rotation): the UWB session ends and the link closes;
    /// the initiator is asked to wait `retryAfter` before coming back.
    private mutating func revoke(retryAfter: Int64) -> [RevokedAction] {
        granted = false
        var actions = roughReport.map { [RevokedAction.rough($0)] } ?? []
        guard link != nil else { return actions }
        let farewell: PeerMessage?
        if isInitiator {
            retry = (now + retryDelay(retryAfter), isClose)
            farewell = nil
        } else {
            farewell = .busy(retryAfterMilliseconds: refuse(retryAfter: retryAfter))
        }
        if let end = endLink(disconnect: true, farewell: farewell) { actions.append(.leave(end)) }
        return actions
    }

    // MARK: UWB

    /// The session asked for or running on this link.
    private var sessionID: UInt32? {
        switch state {
        case .negotiating(let negotiating): negotiating.starting?.parameters.sessionID
        case .ranging(let ranging): ranging.session.parameters.sessionID
        case .discovered, .connecting: nil
        }
    }

    private mutating func uwbStarted(sessionID: UInt32, token: UInt32) -> [UWBStartedAction] {
        let request: UWBSessionRequest
        var accept: UWBStartedAction?
        switch state {
        case .negotiating(let negotiating):
            guard let starting = negotiating.starting, starting.parameters.sessionID == sessionID else { return [] }  // given up since
            request = starting
            state = .ranging(Ranging(link: negotiating.link, session: request, token: token))
            if !request.asController { accept = .accept(sessionID: sessionID, on: negotiating.link.id) }
        case .ranging(var ranging):
            // Resumed after the board came back, or a new session the controller proposed.
            guard ranging.token == nil, ranging.session.parameters.sessionID == sessionID else { return [] }
            request = ranging.session
            ranging.token = token
            state = .ranging(ranging)
        case .discovered, .connecting:
            return []
        }
        uwbFailures = 0
        let parameters = request.parameters
        let route = UWBRoute(token: token, peerAddress: request.asController ? parameters.controleeAddress : parameters.controllerAddress)
        let role = request.asController ? "controller" : "controlee"
        return [.route(route), .log(LogLine(.info, "ranging", ["role": "\(role)", "session": "\(sessionID)"]))]
            + (accept.map { [$0] } ?? [])
    }

    /// How long to wait after `failures` failed starts in a row before trying again: 1 s, then
    /// doubling up to 30 s. A board that refuses every SESSION_INIT is asked a few times a
    /// minute, not five times a second; ranging resumes at the next attempt once it works again.
    static func uwbRetryDelay(afterFailures failures: Int) -> Int64 {
        min(30_000, 1_000 << min(max(failures - 1, 0), 5))
    }

    private mutating func uwbFailed(sessionID: UInt32, error: String) -> [UWBEndedAction] {
        switch state {
        case .negotiating(var negotiating):
            switch negotiating.step {
            case .starting(let request, let proposedAt) where request.parameters.sessionID == sessionID:
                // Propose again once the back-off allows: the controlee's answer restarts the attempt.
                negotiating.step = .proposing(request.parameters, sentAt: proposedAt)
            case .accepting(let request) where request.parameters.sessionID == sessionID:
                negotiating.step = .awaitingParameters  // the controller repeats its proposal until we accept
            case .awaitingPlace, .proposing, .starting, .awaitingParameters, .accepting:
                return []  // given up since
            }
            state = .negotiating(negotiating)
            return [.log(backOff(error))]
        case .ranging(let ranging):
            guard ranging.token == nil, ranging.session.parameters.sessionID == sessionID else { return [] }
            // Ranging could not resume on a board that came back: start over with a new session.
            let log = backOff(error)
            return [.log(log)] + (endLink(disconnect: true, sessionGone: true).map { [.leave($0)] } ?? [])
        case .discovered, .connecting:
            return []
        }
    }

    private mutating func backOff(_ error: String) -> LogLine {
        uwbFailures += 1
        uwbRetryAt = now + Self.uwbRetryDelay(afterFailures: uwbFailures)
        return LogLine(.error, "could not start the UWB session", ["error": "\(error)", "retry in ms": "\(uwbRetryAt - now)"])
    }

    /// The UWBS ended our session on its own: start over from discovery.
    private mutating func uwbSessionEnded(reason: ReasonCode) -> [UWBEndedAction] {
        let log = LogLine(.warning, "UWB session ended by the device", ["reason": "\(reason)"])
        return [.log(log)] + (endLink(disconnect: true).map { [.leave($0)] } ?? [])
    }

    /// The board's sessions are gone; nothing to stop. Ranging resumes when it is back; a
    /// session being opened fails and is handled as any failure.
    private mutating func uwbLost() -> UWBLostAction? {
        guard case .ranging(var ranging) = state, ranging.token != nil else { return nil }
        ranging.token = nil
        state = .ranging(ranging)
        return .unroute
    }

    /// A board that was reset is a fresh start: starts that failed before it went away say
    /// nothing about it, so a peer backing off tries again now. A peer we were ranging with kept
    /// its side running, so ranging resumes without a new negotiation.
    private mutating func uwbBack() -> UWBBackAction? {
        uwbFailures = 0
        uwbRetryAt = now
        guard case .ranging(let ranging) = state, ranging.token == nil else { return nil }
        return .reopen(ranging.session)
    }

    // MARK: Time and proximity

    /// Proximity saw a contact in this peer's ranges: start a profile drop, unless one is under way.
    private mutating func contact(distance: Double) -> [DropAction] {
        guard case .ranging(var ranging) = state else { return [] }
        let actions = startDrop(distance: distance, on: &ranging.link)
        state = .ranging(ranging)
        return actions
    }

    /// Gives up our link at `address` when a deadline passed: says why, counts it against the
    /// address (`refused`: whoever answers there is backed off, `PeerAddresses.refused`), and ends it.
    private mutating func giveUp(
        _ link: LinkID, at address: BLEAddress, refused: Bool, _ message: String, _ metadata: Logger.Metadata = [:]
    ) -> [TickAction] {
        var actions: [TickAction] = [.log(LogLine(.warning, message, metadata.merging(["link": "\(link)", "address": "\(address)"]) { $1 }))]
        if refused { addresses.refused(address, at: now) } else { addresses.failed(address) }
        if let end = endLink(disconnect: true) { actions.append(.abandon(end)) }
        return actions
    }

    /// Repeats unanswered messages and applies the deadlines, and reports what the scheduler
    /// needs, including whether the peer has been silent for longer than the peer timeout.
    private mutating func tick(_ proximity: ProximityView) -> [TickAction] {
        if let measured = proximity.lastMeasuredAt { lastHeard = max(lastHeard, measured) }
        var actions: [TickAction] = []
        switch state {
        case .connecting(let connecting) where connecting.handshakeSince.map { now - $0 >= Self.handshakeTimeoutMilliseconds } == true:
            actions += giveUp(
                connecting.link, at: connecting.address, refused: true, "no answer to the handshake; trying again at the next advert",
                ["within ms": "\(Self.handshakeTimeoutMilliseconds)"])
        case .negotiating(let negotiating) where negotiating.link.unanswered.map { now - $0.since >= Self.handshakeTimeoutMilliseconds } == true:
            // A v1 link nobody answers on (a replayed advert's address): given up like a silent handshake.
            actions += giveUp(
                negotiating.link.id, at: negotiating.link.unanswered!.address, refused: true,
                "no answer on the link; trying again at the next advert", ["within ms": "\(Self.handshakeTimeoutMilliseconds)"])
        case .connecting(let connecting) where now - connecting.since >= config.connectTimeoutMilliseconds:
            actions += giveUp(
                connecting.link, at: connecting.address, refused: false, "connection attempt timed out; trying again at the next advert")
        case .negotiating(let negotiating):
            if case .proposing(let parameters, let sentAt) = negotiating.step, now - sentAt >= config.retransmitMilliseconds,
                now >= uwbRetryAt
            {
                actions.append(.propose(propose(parameters, on: negotiating.link)))
            }
        case .discovered, .connecting, .ranging:
            break
        }
        if var open = openLink {
            actions += dropTimers(on: &open).map(TickAction.drop)
            store(open)
        }
        let isRanging = if case .ranging = state { true } else { false }
        actions.append(
            .report(
                SessionReport(
                    timedOut: now - lastHeard > config.peerTimeoutMilliseconds,
                    holdsPriority: proximity.isNear || openLink?.exchange != nil, rssi: rough.rssi, isRanging: isRanging,
                    available: mayRange, lastHeard: lastHeard, sharedSession: openLink?.sharedSession)))
        return actions
    }
}
