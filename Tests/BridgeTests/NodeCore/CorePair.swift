import BLE
@testable import Bridge
import Events
import PeerProtocol
import PeerSecurity
import Testing
import UCI
import UCIHost

// Two real `NodeCore`s wired back to back through an in-memory air. The harness plays only what
// is physical: the BLE adapters (links open, carry frames, close), the air between them (which a
// test may make drop, delay or duplicate chosen frames), the UWB boards (they answer session
// requests, and report the rounds a test measures), and the clock (it moves only when a test
// says). Which peer a link or a range belongs to, roles, retries and timers are the cores' own.

final class CorePair {
    static let group: UInt16 = 7
    static let start: Int64 = 1_000_000
    /// The rounds' interval: a board reports one round per peer every 100 ms.
    static let roundMilliseconds: Int64 = 100

    static func id(_ side: Side) -> PeerID { side == .c ? PeerID(0x1111_0000_0000_0001) : PeerID(0x9999_0000_0000_0002) }
    static func name(_ side: Side) -> String { side == .c ? "Cee" : "Arr" }
    static func uwbAddress(_ side: Side) -> UInt16 { side == .c ? 0x0C0C : 0x0D0D }
    static func bleAddress(_ side: Side) -> BLEAddress {
        BLEAddress(bytes: side == .c ? [0x01, 0, 0, 0, 0, 0xC0] : [0x02, 0, 0, 0, 0, 0xD0])
    }
    static func card(_ side: Side) -> ProfileCard { ProfileCard(name: "card of \(name(side))") }
    static func identity(_ side: Side) -> NodeIdentity {
        NodeIdentity(peerID: id(side), name: name(side), group: group, card: card(side), uwbShortAddress: uwbAddress(side))
    }
    static let eventKey = try! GroupKey(bytes: (0..<32).map { UInt8($0) &* 7 &+ 3 })
    /// What a one-to-many controller's session manager hands out.
    static func sharedParameters(controlee: UInt16) -> PeerMessage.RangingParameters {
        .init(
            sessionID: 0x5A5A_0001, channel: 9, preambleCodeIndex: 10, controllerAddress: uwbAddress(.c), controleeAddress: controlee,
            vendorID: 0x1234, staticSTSIV: [1, 2, 3, 4, 5, 6], rangingIntervalMilliseconds: 100, oneToManySlots: 7)
    }
    /// A UCI 2.0 board; with `provisionedSTS`, one that runs STS_CONFIG 3 (SUPPORTED_STS_CONFIG
    /// bit 3); with `hopping`, one whose SUPPORTED_HOPPING_MODE (0x0B) is 1.
    static func board(provisionedSTS: Bool, hopping: Bool = false) -> BoardDescription {
        let version = UCIVersion(major: 2, minor: 0, maintenance: 0)
        return BoardDescription(
            info: DeviceInfo(uciVersion: version, macVersion: version, phyVersion: version, uciTestVersion: version, vendorData: []),
            capabilities: [CapabilityTLV(type: 0x07, value: [provisionedSTS ? 0x09 : 0x01]), CapabilityTLV(type: 0x0B, value: [hopping ? 1 : 0])])
    }

    /// What C's adapter does with a connection attempt to R. `refused`: R's kernel answers but
    /// nothing listens on the PSM (R's bridge was killed): the adapter reports the refusal and
    /// the close.
    enum ConnectOutcome { case opens, hangs, fails, refused }
    /// What a board does with a session request: start at once, fail at once, or wait for `answerUWB`.
    enum UWBOutcome { case starts, fails, waits }

    struct Record {
        var side: Side
        var at: Int64
        var effect: NodeEffect
    }

    /// A rig on the air that is not one of the pair: only its adverts, heard by one side.
    /// Connecting to it never completes.
    struct Decoy {
        var id: PeerID
        var heardBy: Side
        var uwbAddress: UInt16
        var address: BLEAddress { BLEAddress(bytes: [0x0D, 0xEC, 0, 0, UInt8(uwbAddress & 0xFF), UInt8(uwbAddress >> 8)]) }
    }

    private enum ConnectionState { case pending, open, closed }

    private struct Connection {
        var from: Side
        var fromLink: LinkID
        /// Nil when the attempt is to a decoy.
        var to: Side?
        /// The acceptor's name for the link, once it opened there.
        var toLink: LinkID?
        var state: ConnectionState
        /// The side whose adapter closed it: frames still on their way to it are not read.
        var closedBy: Side? = nil

        func link(_ side: Side) -> LinkID? { side == from ? fromLink : side == to ? toLink : nil }
    }

    private(set) var now = CorePair.start
    private var cores: BySide<NodeCore>
    let secure: Bool
    let channels: BySide<PeerChannels>
    let provisionedSTS: BySide<Bool>
    let hopping: BySide<Bool>

    var connectOutcome = ConnectOutcome.opens
    var uwbOutcome = BySide(both: UWBOutcome.starts)
    /// Whether the one-to-many session manager answers a reservation at once (as it does), or
    /// only when the test calls `answerReservation`.
    var reservesPlaces = true
    /// How many copies of a frame arrive (0: lost).
    var network: (Packet) -> Int = { _ in 1 }
    /// How long a frame takes to arrive (0: before anything else happens); a delayed frame
    /// arrives when the clock reaches its time, if its link is still open, and the frames sent
    /// after it on its link arrive after it.
    var delay: (Packet) -> Int64 = { _ in 0 }
    /// The RSSI at which each side hears the other's adverts.
    var advertRSSI = BySide(both: -80)
    /// Whether each side's advert carries its name (a v2 advert never does).
    var advertisesName = BySide(both: true)
    private(set) var decoys: [Decoy] = []

    private(set) var records: [Record] = []
    private(set) var lost: [Packet] = []
    /// When the first card went out: the contact of the pair's first drop.
    private(set) var contactAt: Int64?
    private var connections: [Connection] = []
    private var pending: [(Side, NodeInput)] = []
    private var delayed: [(due: Int64, connection: Int, to: Side, frame: [UInt8])] = []
    private var nextLink = BySide<LinkID>(c: 100, r: 200)
    private var sentTotal = 0
    private var sentByKind = BySide(both: [MessageKind: Int]())
    private var tokens: UInt32 = 0
    private var sequence = BySide<UInt32>(both: 0)
    private(set) var uwbRequests = BySide(both: [UWBSessionRequest]())
    /// Requests a board holds (`UWBOutcome.waits`), oldest first.
    private var waitingRequests = BySide(both: [(peer: PeerID, request: UWBSessionRequest)]())
    /// The session each board runs for the other side now: its id and token.
    private(set) var running = BySide<(sessionID: UInt32, token: UInt32)?>(both: nil)
    private var heldReservations = BySide(both: [(peer: PeerID, controlee: UInt16)]())

    /// - Parameters:
    ///   - secure: both rigs share the event key: private adverts, v2 links (handshake, sealed frames).
    ///   - provisionedSTS: whose boards run provisioned STS (their private adverts say so).
    ///   - hopping: whose boards hop rounds (their private adverts say so where the config lets them).
    init(
        config: BySide<BridgeConfig> = .init(both: .init()), secure: Bool = false, provisionedSTS: BySide<Bool> = .init(both: false),
        hopping: BySide<Bool> = .init(both: false)
    ) {
        self.secure = secure
        self.provisionedSTS = provisionedSTS
        self.hopping = BySide(c: hopping.c && config.c.uwb.hopsRounds, r: hopping.r && config.r.uwb.hopsRounds)
        var config = config
        if secure {
            for side in Side.allCases {
                config[side].security.groupKey = Self.eventKey
                config[side].security.keySeed = Array(repeating: side == .c ? 0xC5 : 0xD5, count: 32)
            }
        }
        let channels = BySide(c: PeerChannels(settings: config.c.security), r: PeerChannels(settings: config.r.security))
        self.channels = channels
        func core(_ side: Side) -> NodeCore {
            let environment = NodeCore.Environment(
                identity: Self.identity(side), config: config[side], logger: quietLogger, channels: channels[side],
                boardCorrection: BoardCorrection(config[side].rangeCorrection.correction(forBoard: "")), takeShed: { (0, 0) })
            var core = NodeCore(environment: environment, seed: side == .c ? 11 : 22, now: Self.start)
            core.learn(Self.board(provisionedSTS: provisionedSTS[side], hopping: hopping[side]))
            return core
        }
        cores = BySide(c: core(.c), r: core(.r))
    }

    /// A pair that has connected and ranges (both UWB sessions running).
    static func ranging(sourceLocation: SourceLocation = #_sourceLocation) -> CorePair {
        let pair = CorePair()
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r), sourceLocation: sourceLocation)
        return pair
    }

    // MARK: What left the cores

    /// A position in the record, to read what happened after it.
    var mark: Int { records.count }

    func effects(_ side: Side, since mark: Int = 0) -> [NodeEffect] {
        records[mark...].filter { $0.side == side }.map(\.effect)
    }
    /// The radio effects of `side` since `mark`: events left out.
    func radio(_ side: Side, since mark: Int = 0) -> [NodeEffect] {
        effects(side, since: mark).filter { if case .emit = $0 { false } else { true } }
    }
    func events(_ side: Side, since mark: Int = 0) -> [Event.Body] {
        records[mark...].flatMap { record -> [Event.Body] in
            guard record.side == side, case .emit(let events) = record.effect else { return [] }
            return events.map(\.body)
        }
    }
    func bumps(_ side: Side) -> [Event.Bump] {
        events(side).compactMap { if case .bump(let bump) = $0 { bump } else { nil } }
    }
    func lost(_ side: Side, since mark: Int = 0) -> [Event.PeerLost] {
        events(side, since: mark).compactMap { if case .peerLost(let lost) = $0 { lost } else { nil } }
    }
    func found(_ side: Side, since mark: Int = 0) -> [Event.PeerFound] {
        events(side, since: mark).compactMap { if case .peerFound(let found) = $0 { found } else { nil } }
    }
    /// The messages `side` sent since `mark` (v1 links: read back with the real decoder), with when.
    func sent(_ side: Side, since mark: Int = 0) -> [(at: Int64, message: PeerMessage)] {
        records[mark...].compactMap { record in
            guard record.side == side, case .send(let frame, _) = record.effect, let message = try? PeerMessage(frame: frame) else { return nil }
            return (record.at, message)
        }
    }
    func sent(_ side: Side, _ kind: MessageKind, since mark: Int = 0) -> [(at: Int64, message: PeerMessage)] {
        sent(side, since: mark).filter { $0.message.kind == kind }
    }
    /// Frames `side` handed its adapter since `mark` (any version), with the link.
    func frames(_ side: Side, since mark: Int = 0) -> [(link: LinkID, frame: [UInt8])] {
        records[mark...].compactMap { record in
            guard record.side == side, case .send(let frame, let link) = record.effect else { return nil }
            return (link, frame)
        }
    }
    /// When C asked to connect to R since `mark`.
    func connects(since mark: Int = 0) -> [Int64] {
        records[mark...].compactMap { record in
            guard case .connect(let address, _) = record.effect, address == Self.bleAddress(record.side.other) else { return nil }
            return record.at
        }
    }
    func closeUWBs(_ side: Side, since mark: Int = 0) -> Int {
        effects(side, since: mark).count { $0 == .closeUWB(Self.id(side.other)) }
    }
    func disconnects(_ side: Side, since mark: Int = 0) -> [LinkID] {
        effects(side, since: mark).compactMap { if case .disconnect(let link) = $0 { link } else { nil } }
    }
    /// The parameters C proposed last (v1 links).
    var proposed: PeerMessage.RangingParameters? {
        sent(.c, .rangingParameters).last.flatMap { if case .rangingParameters(let p) = $0.message { p } else { nil } }
    }

    // MARK: The air as it is now

    /// `side`'s end of the open link between the two, if there is one.
    func link(_ side: Side) -> LinkID? {
        connections.last { $0.state == .open && $0.to != nil && $0.toLink != nil }?.link(side)
    }
    /// The link `side`'s adapter named for its last connection attempt.
    func lastAttempt(_ side: Side) -> LinkID? { connections.last { $0.from == side }?.fromLink }
    /// The links `side`'s core holds open.
    func openLinks(_ side: Side) -> Set<LinkID> { cores[side].openLinks }
    /// `side`'s board runs a session for the other side, and the link it was agreed on is open.
    func isRanging(_ side: Side) -> Bool { running[side] != nil && link(side) != nil }

    // MARK: Inputs

    /// Hands one input to one side (as its node's loop would), then lets the air and the boards
    /// carry everything it sets off. Returns that input's own effects.
    @discardableResult
    func feed(_ side: Side, _ input: NodeInput) -> [NodeEffect] {
        let mark = self.mark
        apply(side, input)
        let own = records[mark...].filter { $0.side == side }.map(\.effect)
        drain()
        return own
    }

    /// Inputs that happen at the same moment, handed over before anything they set off arrives.
    func simultaneously(_ inputs: [(Side, NodeInput)]) {
        for (side, input) in inputs { apply(side, input) }
        drain()
    }

    /// The advert `side` broadcasts, built with the real encoders: v1 with its name in the scan
    /// response, or the private (v2) advert of the event key.
    func advertisingData(of side: Side) -> [UInt8] {
        var advert = Advertisement(
            group: Self.group, peerID: Self.id(side), uwbShortAddress: Self.uwbAddress(side), capabilities: [.uwb, .oneToMany], psm: 0x85)
        guard secure else {
            return advert.advertisingData() + (advertisesName[side] ? AdvertisingData.localName(Self.name(side)).bytes : [])
        }
        if provisionedSTS[side] { advert.capabilities.insert(.provisionedSTS) }
        if hopping[side] { advert.capabilities.insert(.roundHopping) }
        return PrivateAdvert(key: Self.eventKey).advertisingData(for: advert, nonce: [1, 2, 3, 4, side == .c ? 0xC : 0xD])
    }

    /// `side` hears the other side's advert.
    @discardableResult
    func heard(_ side: Side, rssi: Int? = nil) -> [NodeEffect] {
        feed(side, .ble(.advertisement(Self.bleAddress(side.other), rssi: rssi ?? advertRSSI[side], data: advertisingData(of: side.other))))
    }

    /// A third rig `heardBy` one side hears (see `Decoy`); it is heard once now.
    @discardableResult
    func addDecoy(id: UInt64, heardBy side: Side) -> Decoy {
        let decoy = Decoy(id: PeerID(id), heardBy: side, uwbAddress: 0x0E00 + UInt16(decoys.count))
        decoys.append(decoy)
        hear(decoy)
        return decoy
    }

    func hear(_ decoy: Decoy) {
        let advert = Advertisement(group: Self.group, peerID: decoy.id, uwbShortAddress: decoy.uwbAddress, capabilities: [.uwb, .oneToMany], psm: 0x85)
        let data = secure ? PrivateAdvert(key: Self.eventKey).advertisingData(for: advert, nonce: [9, 9, 9, 9, 9]) : advert.advertisingData()
        feed(decoy.heardBy, .ble(.advertisement(decoy.address, rssi: -80, data: data)))
    }

    /// A v1 frame carrying `message` arrives on `side`'s end of the link, as if its peer had sent it.
    @discardableResult
    func inject(_ message: PeerMessage, to side: Side, sourceLocation: SourceLocation = #_sourceLocation) -> [NodeEffect] {
        guard let link = link(side) else {
            Issue.record("no open link to inject \(message) on", sourceLocation: sourceLocation)
            return []
        }
        return feed(side, .ble(.linkData(link, message.encoded())))
    }

    /// Answers the oldest session request `side`'s board holds (`UWBOutcome.waits`).
    @discardableResult
    func answerUWB(_ side: Side, starts: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) -> [NodeEffect] {
        guard !waitingRequests[side].isEmpty else {
            Issue.record("\(side)'s board holds no session request", sourceLocation: sourceLocation)
            return []
        }
        let (peer, request) = waitingRequests[side].removeFirst()
        return feed(side, boardAnswer(side, peer: peer, request, starts: starts))
    }

    /// Answers the reservation `side`'s one-to-many session manager held (`reservesPlaces` false).
    @discardableResult
    func answerReservation(_ side: Side) -> [NodeEffect] {
        guard !heldReservations[side].isEmpty else { return [] }
        let (peer, controlee) = heldReservations[side].removeFirst()
        return feed(side, .sharedPlaceReserved(peer, Self.sharedParameters(controlee: controlee)))
    }

    /// The link between the two drops (both adapters report it closed).
    func breakLink() {
        for index in connections.indices where connections[index].state == .open {
            connections[index].state = .closed
            for side in Side.allCases { if let link = connections[index].link(side) { pending.append((side, .ble(.linkClosed(link)))) } }
        }
        drain()
    }

    /// A connection attempt `side` gave up on completes after all: its adapter reports it open.
    func openLate(_ link: LinkID, on side: Side) {
        guard let index = connections.firstIndex(where: { $0.from == side && $0.fromLink == link }) else { return }
        connections[index].state = .open
        feed(side, .ble(.linkOpened(link, peer: Self.bleAddress(side.other), initiatedLocally: true)))
    }

    /// One round `side`'s board measured to the other side, in the session it runs now (or `token`).
    func round(_ side: Side, centimetres: UInt16?, token: UInt32? = nil) -> RangeData {
        sequence[side] += 1
        let measurement = TwoWayMeasurement(
            address: .short(Self.uwbAddress(side.other)), status: centimetres == nil ? .rangingRxTimeout : .ok, lineOfSight: .lineOfSight,
            distanceCentimetres: centimetres ?? 0xFFFF)
        return RangeData(
            sequenceNumber: sequence[side], session: token ?? running[side]?.token ?? 0, rangingIntervalMilliseconds: UInt32(Self.roundMilliseconds),
            measurements: [measurement])
    }

    /// Rounds `side`'s board reports now, as one batch.
    @discardableResult
    func ranges(_ side: Side, centimetres: [UInt16?], token: UInt32? = nil) -> [NodeEffect] {
        feed(side, .ranges(centimetres.map { round(side, centimetres: $0, token: token) }))
    }

    /// Whether a round of `side`'s board, in the session it runs, reaches the other side's peer
    /// (a failed round: it leaves a `range` event and nothing else).
    func rangesReach(_ side: Side, token: UInt32? = nil) -> Bool {
        ranges(side, centimetres: [nil], token: token).contains { effect in
            guard case .emit(let events) = effect else { return false }
            return events.contains { if case .range(let range) = $0.body { range.peer == Self.id(side.other).description } else { false } }
        }
    }

    /// Distances of a gesture, one round each 100 ms: held apart (which re-arms a detector that
    /// fired before), then brought together until they touch.
    static let apart: [UInt16] = Array(repeating: 100, count: 10)
    static let approach: [UInt16] = [100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 5, 2, 0, 0, 0, 0, 0, 0, 0, 0]

    /// The devices brought together: each step moves the clock one round, ticks both sides and
    /// hands the round to each of `sides` (at once, before anything they set off), and the round
    /// before to each of `lagging` (a board whose notifications come a round later). Stops after
    /// the round in which a card left either side: the contact. Returns whether one did.
    @discardableResult
    func touch(
        _ sides: [Side], lagging: [Side] = [], apartFirst: Bool = true, expectContact: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let before = sent(.c, .card).count + sent(.r, .card).count
        let distances = (apartFirst ? Self.apart : []) + Self.approach
        for (index, distance) in distances.enumerated() {
            step(Self.roundMilliseconds)
            let leading = sides.map { ($0, NodeInput.ranges([round($0, centimetres: distance)])) }
            let late = index == 0 ? [] : lagging.map { ($0, NodeInput.ranges([round($0, centimetres: distances[index - 1])])) }
            simultaneously(leading + late)
            if sent(.c, .card).count + sent(.r, .card).count > before { return true }
        }
        if expectContact { Issue.record("no contact after the whole approach", sourceLocation: sourceLocation) }
        return false
    }

    /// Feeds `sides` rounds of the devices held apart (1 m), one each 100 ms: a fired detector re-arms.
    func separate(_ sides: [Side]) {
        hold(sides, centimetres: Self.apart[0], rounds: Self.apart.count)
    }

    /// Feeds `sides` `rounds` rounds at one distance, one each 100 ms.
    func hold(_ sides: [Side], centimetres: UInt16, rounds: Int) {
        for _ in 0..<rounds {
            step(Self.roundMilliseconds)
            simultaneously(sides.map { ($0, .ranges([round($0, centimetres: centimetres)])) })
        }
    }

    // MARK: Time

    /// Moves the clock without a tick (frames due by then arrive).
    func advance(_ milliseconds: Int64) {
        now += milliseconds
        releaseDelayed()
    }

    /// One tick on each of `sides`, now.
    func tick(_ sides: [Side] = [.c, .r]) {
        for side in sides { feed(side, .tick) }
    }

    private func step(_ milliseconds: Int64) {
        advance(milliseconds)
        tick()
    }

    /// Moves the clock by `milliseconds` in steps of `step`, ticking both sides at each step and,
    /// with `adverts`, then letting each hear the other (and the decoys be heard) every 100 ms.
    /// Stops early once `until` holds.
    func run(_ milliseconds: Int64, step: Int64 = 50, adverts: Bool = false, until: (() -> Bool)? = nil) {
        let end = now + milliseconds
        while now < end {
            if let until, until() { return }
            self.step(min(step, end - now))
            if adverts, now % 100 == 0 {
                heard(.c)
                heard(.r)
                for decoy in decoys { hear(decoy) }
            }
        }
    }

    // MARK: The adapters, the air and the boards

    private func apply(_ side: Side, _ input: NodeInput) {
        let effects = cores[side].handle(input, now: now)
        for effect in effects {
            records.append(Record(side: side, at: now, effect: effect))
            perform(effect, by: side)
        }
    }

    private func drain() {
        while !pending.isEmpty {
            let (side, input) = pending.removeFirst()
            if case .ble(.linkData(let link, _)) = input, connections.contains(where: { $0.closedBy == side && $0.link(side) == link }) {
                continue  // its socket is closed: what was on its way is not read
            }
            apply(side, input)
        }
    }

    private func releaseDelayed() {
        let due = delayed.filter { $0.due <= now }
        delayed.removeAll { $0.due <= now }
        for frame in due {
            let connection = connections[frame.connection]
            guard connection.state == .open, let link = connection.link(frame.to) else { continue }
            pending.append((frame.to, .ble(.linkData(link, frame.frame))))
        }
        drain()
    }

    private func newLink(_ side: Side) -> LinkID {
        nextLink[side] += 1
        return nextLink[side]
    }

    /// As `BridgeNode.perform`: the answers the adapter and the session manager give at once go
    /// back in before the rest of the effects; everything else arrives later, in order.
    private func perform(_ effect: NodeEffect, by side: Side) {
        switch effect {
        case .emit: break
        case .send(let frame, let link): transmit(frame, from: side, on: link)
        case .connect(let address, let peer):
            if connectOutcome == .fails { return apply(side, .connectFailed(peer, "test: the adapter refused")) }
            let link = newLink(side)
            let target: Side? = address == Self.bleAddress(side.other) ? side.other : nil
            connections.append(Connection(from: side, fromLink: link, to: target, state: .pending))
            apply(side, .connectStarted(peer, link))
            if let target, connectOutcome == .opens {
                let index = connections.count - 1
                let accepted = newLink(target)
                connections[index].toLink = accepted
                connections[index].state = .open
                pending.append((target, .ble(.linkOpened(accepted, peer: Self.bleAddress(side), initiatedLocally: false))))
                pending.append((side, .ble(.linkOpened(link, peer: address, initiatedLocally: true))))
            }
            if connectOutcome == .refused {
                connections[connections.count - 1].state = .closed
                pending.append((side, .ble(.connectRefused(link))))
                pending.append((side, .ble(.linkClosed(link))))
            }
        case .disconnect(let link):
            guard let index = connections.firstIndex(where: { $0.link(side) == link && $0.state != .closed }) else { return }
            connections[index].state = .closed
            connections[index].closedBy = side
            // As the adapters do: the side that closes hears no close of its own, the other does.
            if let link = connections[index].link(side.other) { pending.append((side.other, .ble(.linkClosed(link)))) }
        case .openUWB(let request, let peer):
            uwbRequests[side].append(request)
            switch uwbOutcome[side] {
            case .starts: pending.append((side, boardAnswer(side, peer: peer, request, starts: true)))
            case .fails: pending.append((side, boardAnswer(side, peer: peer, request, starts: false)))
            case .waits: waitingRequests[side].append((peer, request))
            }
        case .closeUWB(let peer):
            guard peer == Self.id(side.other) else { return }
            running[side] = nil
            waitingRequests[side] = []
        case .reserveSharedPlace(let controlee, let peer):
            if reservesPlaces {
                apply(side, .sharedPlaceReserved(peer, Self.sharedParameters(controlee: controlee)))
            } else {
                heldReservations[side].append((peer, controlee))
            }
        case .forgetBoardSessions:
            running[side] = nil
            waitingRequests[side] = []
        case .notify, .openPhoneUWB:
            break  // phones: NodeCorePhoneTests answers for their board
        }
    }

    private func boardAnswer(_ side: Side, peer: PeerID, _ request: UWBSessionRequest, starts: Bool) -> NodeInput {
        let session = request.parameters.sessionID
        guard starts else { return .uwbSessions(.failed(peer, sessionID: session, error: .timeout(command: "SESSION_INIT"))) }
        tokens += 1
        let token = (side == .c ? 0xC000 : 0xD000) + tokens
        running[side] = (session, token)
        return .uwbSessions(.started(peer, sessionID: session, token: token))
    }

    private func transmit(_ frame: [UInt8], from side: Side, on link: LinkID) {
        guard let index = connections.firstIndex(where: { $0.state == .open && $0.link(side) == link }),
            let to = side == connections[index].from ? connections[index].to : connections[index].from,
            let toLink = connections[index].link(to)
        else { return }
        let message = secure ? nil : try? PeerMessage(frame: frame)
        if message?.kind == .card, contactAt == nil { contactAt = now }
        let kindIndex = message.map { sentByKind[side][$0.kind, default: 0] } ?? -1
        let packet = Packet(
            from: side, message: message, bytes: frame, at: now, index: sentTotal, kindIndex: kindIndex,
            sinceContact: contactAt.map { now - $0 })
        sentTotal += 1
        if let message { sentByKind[side][message.kind, default: 0] += 1 }
        let copies = network(packet)
        if copies == 0 { lost.append(packet) }
        // A link keeps its frames in order: one behind a late frame waits for it.
        let behind = delayed.last { $0.connection == index && $0.to == to }?.due ?? now
        let due = max(now + delay(packet), behind)
        for _ in 0..<copies {
            if due > now {
                delayed.append((due, index, to, frame))
            } else {
                pending.append((to, .ble(.linkData(toLink, frame))))
            }
        }
    }
}
