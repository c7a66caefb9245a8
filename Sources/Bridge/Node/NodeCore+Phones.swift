import AndroidRangingOOB
import ByteCoding
import Events
import GATTServer
import NearbyInteractionAccessory
import PeerProtocol
import Proximity
import UCI

/// Phones as peers (issues 33 and 31): an iPhone's Nearby Interaction app writes Apple's
/// accessory messages to the rig's GATT server, an Android app Android's ranging OOB messages or
/// Jetpack's parameters; the phone's `PhoneSession` (by the
/// characteristic it first wrote) answers them, and once its board session runs, its rounds feed
/// the same proximity engine as a rig's. A phone is known by its GATT client; its id is drawn at
/// its first write, and it keeps the protocol of that write (a write in the other one is ignored,
/// one notice).
///
/// How phones share the board's sessions with rigs: phones hold at most `phoneSessions` of them
/// at once (half, at least one). A phone that asks for a session waits until one of those is
/// free; the next tick's schedule then gives the rigs that many fewer sessions, revoking the rig
/// ranked last (one whose turn is over, never a rig near or in a profile drop before a farther
/// one), and the phone's session opens behind the rig's close. A phone keeps its session until
/// it stops (its accessory protocol has no way to pause and resume), so rigs always keep the
/// other half.
extension NodeCore {
    /// Phones served at once; a GATT client beyond them is not answered (one notice).
    static let maximumPhones = 32

    /// Sessions phones may hold at once.
    var phoneSessions: Int { max(1, scheduler.budget / 2) }

    /// Sessions left to rigs: the budget less what phones hold or wait for, within their share.
    var rigSessions: Int {
        let wanted = phones.values.count { $0.board != nil || $0.waiting != nil }
        return max(0, scheduler.budget - min(phoneSessions, wanted))
    }

    mutating func handle(_ event: GATTClientEvent) {
        switch event {
        case .client(let client, .write(let characteristic, _, let value, _)):
            phoneWrote(value, on: characteristic, by: client)
        case .client(_, .subscription), .client(_, .indicationConfirmed), .client(_, .send):
            break
        case .closed(let client):
            guard let id = phoneByClient.removeValue(forKey: client) else { return }
            feedPhone(id, .linkEnded)
        }
    }

    private mutating func phoneWrote(_ value: [UInt8], on characteristic: GATTUUID, by client: GATTClient) {
        if characteristic == AccessoryGATTService.tokenCharacteristic {
            // The GATT server holds a write to at most 64 octets; an empty one clears the token.
            guard let id = phone(for: client) else { return }
            phones[id]?.token = value.isEmpty ? nil : value.hexString
            return
        }
        // A message goes back on the service it came from.
        guard let (phoneProtocol, answerOn) = PhoneTransport.route(write: characteristic),
            let id = phone(for: client, speaking: phoneProtocol)
        else { return }
        if phones[id]?.session.phoneProtocol != phoneProtocol {
            // Only its token came before: its first message decides its protocol.
            guard phones[id]?.found == false else {
                ignoreOnce("phone-protocol-\(id)", "a phone wrote in a second phone protocol: ignored, it keeps its first", ["peer": "\(id)"])
                return
            }
            let session = newSession(phoneProtocol)
            phones[id]?.session = session
        }
        phones[id]?.answerOn = answerOn
        phones[id]?.lastHeard = now
        feedPhone(id, .phoneWrote(value))
    }

    /// The phone writing as `client`, new if it has not written before (nil over the limit); a new
    /// one speaks `phoneProtocol` (one whose token came first takes its first message's).
    private mutating func phone(for client: GATTClient, speaking phoneProtocol: PhoneTransport.PhoneProtocol = .appleAccessory) -> PeerID? {
        if let id = phoneByClient[client] { return id }
        guard phones.count < Self.maximumPhones else {
            ignoreOnce("phones", "more phones than a rig serves at once: not answering the newest", ["limit": "\(Self.maximumPhones)"])
            return nil
        }
        var id: PeerID
        repeat { id = PeerID(random.next()) } while knows(id) || phones[id] != nil || id == identity.peerID
        phones[id] = PhonePeer(
            session: newSession(phoneProtocol), client: client, answerOn: AccessoryGATTService.qorvoTX, proximity: newProximity(id),
            lastHeard: now)
        phoneByClient[client] = id
        return id
    }

    /// A phone's proximity before any of its rounds.
    private func newProximity(_ id: PeerID) -> PeerProximity {
        PeerProximity(processor: RangeProcessor(peer: id.description, config: config))
    }

    private func newSession(_ phoneProtocol: PhoneTransport.PhoneProtocol) -> PhoneSession {
        switch phoneProtocol {
        case .appleAccessory: .accessory(AccessorySession(settings: phoneSettings))
        case .androidRangingOOB: .android(AndroidOOBResponder(settings: androidSettings))
        case .jetpackParameters: .jetpack(JetpackResponder(settings: androidSettings))
        }
    }

    /// Hands `input` to the phone's session and carries out what it answers.
    mutating func feedPhone(_ id: PeerID, _ input: PhoneSession.Input) {
        guard let actions = phones[id]?.session.receive(input, now: now) else { return }
        for action in actions {
            switch action {
            case .send(let message):
                reportPhoneFound(id)
                guard let phone = phones[id] else { continue }
                effects.append(.notify(phone.client, characteristic: phone.answerOn, message))
            case .startBoardSession(let sessionID, let appConfig):
                reportPhoneFound(id)
                phones[id]?.inSession = true
                phones[id]?.waiting = (PhonePeer.SessionRequest(sessionID: sessionID, appConfig: appConfig), now)
                startWaitingPhones()
            case .stopBoardSession(let sessionID):
                stopPhoneSession(id, sessionID: sessionID)
            case .log(let reason):
                logger.notice("phone: \(reason)", metadata: ["peer": "\(id)"])
            case .ended:
                removePhone(id)
            }
        }
        reportSessionEnd(id)
    }

    /// An Android phone whose session ended (its stop, or the rig's) while its link stays is
    /// reported lost (`peer-ended`), as if it had gone, and found again with its next session: a
    /// phone between sessions does not range, so it is no nearby peer.
    private mutating func reportSessionEnd(_ id: PeerID) {
        guard let phone = phones[id], phone.inSession, phone.session.endsWithItsSession, phone.session.boardSessionID == nil,
            phone.board == nil, phone.waiting == nil
        else { return }
        phones[id]?.inSession = false
        guard phone.found else { return }
        phones[id]?.found = false
        let fresh = newProximity(id)
        phones[id]?.proximity = fresh
        nearest.remove(peer: id.rawValue, now: now)
        events.append(Event(node: tag, body: .peerLost(.init(peer: id.description, reason: .peerEnded))))
    }

    private mutating func reportPhoneFound(_ id: PeerID) {
        guard let phone = phones[id], !phone.found else { return }
        phones[id]?.found = true
        events.append(Event(node: tag, body: .peerFound(.init(peer: id.description, name: "", rssi: nil, phone: facts(phone)))))
    }

    private func facts(_ phone: PhonePeer) -> Event.Phone {
        Event.Phone(platform: phone.session.platform, token: phone.token)
    }

    /// Opens the sessions of waiting phones, longest waiting first, while phones have a share
    /// left and the board a session free.
    mutating func startWaitingPhones() {
        let waiting = phones.compactMap { id, phone in phone.waiting.map { (id, $0) } }.sorted { ($0.1.since, $0.0) < ($1.1.since, $1.0) }
        guard !waiting.isEmpty else { return }
        var used = scheduler.sessionsNeeded(grantedDemand())
        var holding = phones.values.count { $0.board != nil }
        used += holding
        for (id, request) in waiting {
            guard holding < phoneSessions, used < scheduler.budget else { return }
            holding += 1
            used += 1
            let configuration = request.configuration
            phones[id]?.waiting = nil
            phones[id]?.board = PhonePeer.BoardSession(sessionID: configuration.sessionID, phoneAddress: Self.phoneAddress(in: configuration.appConfig))
            effects.append(.openPhoneUWB(sessionID: configuration.sessionID, appConfig: configuration.appConfig, for: id))
        }
    }

    /// The phone's short address as the board reports it in its rounds: DST_MAC_ADDRESS's two
    /// octets, little-endian as UCI reads every field (whatever `AccessoryOctetOrder` made them).
    static func phoneAddress(in appConfig: [AppConfigTLV]) -> UInt16 {
        guard let octets = appConfig.first(where: { $0.id == .dstMacAddress })?.value, octets.count == 2 else { return 0 }
        return UInt16(octets[0]) | UInt16(octets[1]) << 8
    }

    /// The machine gives the session up. One the board never got (it waited for a slot, or its
    /// start failed and the session manager deinitialised it) is reported gone at once.
    private mutating func stopPhoneSession(_ id: PeerID, sessionID: UInt32) {
        if phones[id]?.waiting?.configuration.sessionID == sessionID { phones[id]?.waiting = nil }
        guard var board = phones[id]?.board, board.sessionID == sessionID, !board.closing else {
            return feedPhone(id, .neverStarted(session: sessionID))
        }
        board.closing = true
        phones[id]?.board = board
        effects.append(.closeUWB(id))
    }

    /// The session manager started (`token`) or failed a phone's session.
    mutating func phoneSessionOpened(_ id: PeerID, sessionID: UInt32, token: UInt32?, status: StatusCode) {
        guard var board = phones[id]?.board, board.sessionID == sessionID else { return }
        guard let token else {
            phones[id]?.board = nil
            forgetEarlyActiveUnlessOpening()
            feedPhone(id, .boardCommandFailed(session: sessionID, status: status))
            return startWaitingPhones()
        }
        board.token = token
        phones[id]?.board = board
        phoneByToken[token] = id
        logger.info(
            "ranging with a phone",
            metadata: ["peer": "\(id)", "platform": "\(phones[id]?.session.platform.rawValue ?? "")", "session": "\(sessionID)"])
        // The board's ACTIVE may have come before the session manager's report.
        let cameEarly = earlyActive.contains(token)
        earlyActive.removeAll { $0 == token }
        forgetEarlyActiveUnlessOpening()
        if cameEarly, !board.closing {
            feedPhone(id, .boardStatus(session: sessionID, state: .active, reason: .stateChangeWithSessionManagementCommands))
        }
    }

    /// Whether a phone's session was asked for and its start not reported yet.
    private var phoneOpening: Bool { phones.values.contains { $0.board != nil && $0.board?.token == nil } }

    /// ACTIVEs kept for phones' starts are rigs' once no phone's start is pending: dropped, so
    /// they never fill the few places kept for phones.
    private mutating func forgetEarlyActiveUnlessOpening() {
        if !earlyActive.isEmpty, !phoneOpening { earlyActive = [] }
    }

    /// A SESSION_STATUS_NTF: to the phone whose session it is, by the board's handle.
    mutating func phoneSessionStatus(token: UInt32, state: SessionState, reason: ReasonCode) {
        guard let id = phoneByToken[token], let board = phones[id]?.board else {
            // A phone's session may report ACTIVE before its start is reported: kept for it
            // (the latest 16, while a phone's start is pending).
            if state == .active, phoneOpening {
                earlyActive.append(token)
                if earlyActive.count > 16 { earlyActive.removeFirst() }
            }
            return
        }
        if state == .deinitialized {
            phoneByToken[token] = nil
            phones[id]?.board = nil
        }
        feedPhone(id, .boardStatus(session: board.sessionID, state: state, reason: reason))
        if state == .deinitialized { startWaitingPhones() }
    }

    /// The phone a round's measurement is from, if it is a phone's running session.
    func phone(for route: UWBRoute) -> PeerID? {
        guard let id = phoneByToken[route.token], let board = phones[id]?.board, !board.closing, board.phoneAddress == route.peerAddress
        else { return nil }
        return id
    }

    /// A phone's readings of the batch, as a rig's.
    mutating func processPhone(
        _ phone: PeerID, readings: ArraySlice<RangeBatch.Reading>, of rounds: [RangeData], correction: RangeCorrection
    ) {
        guard phones[phone] != nil else { return }
        phones[phone]?.proximity.processor.correction = correction
        for reading in readings {
            let round = rounds[reading.round]
            guard let outcome = phones[phone]?.proximity.processor.process(round.measurements[reading.measurement], of: round, hostTime: now)
            else { continue }
            if outcome.measured { phones[phone]?.proximity.lastMeasuredAt = now }
            record(outcome, of: phone)
        }
        nearest.update(peer: phone.rawValue, distance: phones[phone]?.proximity.processor.proximity.filtered, time: now)
    }

    /// A contact with a phone is a bump the rig decides alone: no card goes either way.
    mutating func phoneContact(_ id: PeerID, distance: Double) {
        guard var phone = phones[id] else { return }
        phone.proximity.processor.consumeContact()
        phone.lastBumpID &+= 1
        if phone.lastBumpID == 0 { phone.lastBumpID = 1 }
        phones[id] = phone
        events.append(
            Event(
                node: tag,
                body: .bump(.init(peer: id.description, bumpID: phone.lastBumpID, distance: distance, cardJSON: "{}", phone: facts(phone)))))
    }

    /// The board went away: a phone's session on it is gone as if deinitialised.
    mutating func phonesLostBoard() {
        for id in phones.keys.sorted() {
            guard let board = phones[id]?.board else { continue }
            if let token = board.token { phoneByToken[token] = nil }
            phones[id]?.board = nil
            feedPhone(id, .boardStatus(session: board.sessionID, state: .deinitialized, reason: .stateChangeWithSessionManagementCommands))
        }
        earlyActive = []
    }

    mutating func tickPhones() {
        for id in phones.keys.sorted() { feedPhone(id, .tick) }
        startWaitingPhones()
    }

    /// Stopping: every phone's session ends as if it had disconnected.
    mutating func stopPhones() {
        for id in phones.keys.sorted() { feedPhone(id, .linkEnded) }
    }

    private mutating func removePhone(_ id: PeerID) {
        guard let phone = phones.removeValue(forKey: id) else { return }
        if phoneByClient[phone.client] == id { phoneByClient[phone.client] = nil }
        if let token = phone.board?.token, phoneByToken[token] == id { phoneByToken[token] = nil }
        forgetEarlyActiveUnlessOpening()
        nearest.remove(peer: id.rawValue, now: now)
        if phone.found { events.append(Event(node: tag, body: .peerLost(.init(peer: id.description, reason: .peerEnded)))) }
        startWaitingPhones()
    }
}
