@testable import Bridge
import Events
import GATTServer
import PeerProtocol
import Testing
import UCI

/// Phones as peers in the node's core (issue 33): an iPhone's accessory messages come in as GATT
/// writes, its session goes to the board as one request, its rounds make `range`, `near` and
/// `bump` events marked as a phone's. The phone's octets are written by hand from Apple's Nearby
/// Interaction Accessory Protocol Specification R4 (the shareable configuration data's layout,
/// as AOSP's ranging test app `IosAccessoryConfigurationData` reads it; message ids from Apple's
/// accessory sample app: 0x0A, 0x0B, 0x0C from the phone, 0x01, 0x02, 0x03 to it).
@Suite struct NodeCorePhoneTests {
    /// Version 1.1 shareable configuration data: a 5-octet header whose length octet counts the
    /// 25 that follow, then little-endian fields.
    static let shareable: [UInt8] = [
        0x01, 0x00, 0x01, 0x00,  // version 1.1
        25,  // length
        0x44, 0x45,  // country code "DE"
        0xFE, 0xCA, 0xAD, 0x0B,  // session id 0x0BADCAFE
        11,  // preamble code index
        9,  // channel
        6, 0x00,  // slots per round
        0x60, 0x09,  // slot duration 2400 RSTU
        120, 0x00,  // ranging interval 120 ms
        0x03,  // ranging round control
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66,  // static STS IV
        0x7A, 0x3C,  // the phone's short address 0x3C7A
        20, 0x00,  // maximum clock drift 20 ppm
    ]
    static let sessionID: UInt32 = 0x0BAD_CAFE
    static let phoneAddress: UInt16 = 0x3C7A

    /// 0x01 for rig C (short address 0x0C0C), version 1.1: the accessory configuration data.
    static let accessoryConfiguration: [UInt8] = [
        0x01,  // message id
        0x01, 0x00, 0x00, 0x00,  // header version 1.0
        0x00,  // preferred update rate: automatic
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // reserved
        21,  // UWB configuration data length
        0x01, 0x00, 0x01, 0x00,  // UWB configuration data version 1.1
        0x00, 0x00, 0x00, 0x00,  // manufacturer id
        0x00, 0x00, 0x00, 0x00,  // model id
        0x00, 0x00, 0x00, 0x00,  // middleware version
        0x00,  // device role: responder
        0x0C, 0x0C,  // the rig's short address
        20, 0x00,  // maximum clock drift, ppm
    ]

    static let rx = AccessoryGATTService.qorvoRX
    static let tx = AccessoryGATTService.qorvoTX
    static let phoneA = GATTClient("phone-a")
    static let phoneB = GATTClient("phone-b")

    static func write(_ client: GATTClient, _ value: [UInt8], on characteristic: GATTUUID = rx) -> NodeInput {
        .gatt(.client(client, .write(characteristic: characteristic, valueHandle: 0x0010, value: value, withResponse: true)))
    }

    static func notified(_ effects: [NodeEffect]) -> [(GATTClient, GATTUUID, [UInt8])] {
        effects.compactMap { if case .notify(let client, let characteristic, let value) = $0 { (client, characteristic, value) } else { nil } }
    }

    static func opened(_ effects: [NodeEffect]) -> [(UInt32, [AppConfigTLV], PeerID)] {
        effects.compactMap { if case .openPhoneUWB(let id, let config, let peer) = $0 { (id, config, peer) } else { nil } }
    }

    static func events(_ effects: [NodeEffect]) -> [Event.Body] {
        effects.flatMap { effect -> [Event.Body] in if case .emit(let batch) = effect { batch.map(\.body) } else { [] } }
    }

    /// The board's SESSION_STATUS_NTF for `token`, as a management command leaves it.
    static func status(_ token: UInt32, _ state: SessionState) -> NodeInput {
        .uwb(.notification(.sessionStatus(session: token, state: state, reason: .stateChangeWithSessionManagementCommands)))
    }

    static func round(_ token: UInt32, centimetres: UInt16, sequence: UInt32) -> RangeData {
        RangeData(
            sequenceNumber: sequence, session: token, rangingIntervalMilliseconds: 120,
            measurements: [
                TwoWayMeasurement(address: .short(phoneAddress), status: .ok, lineOfSight: .lineOfSight, distanceCentimetres: centimetres)
            ])
    }

    /// A phone's whole visit: token, 0x0A → 0x01, 0x0B → one board session with its mapping,
    /// ACTIVE (here before the session manager's report) → 0x02, rounds → `range`, `near`, a
    /// `bump` decided by the rig, 0x0C → the session closed, DEINIT → 0x03, gone → `peer.lost`.
    @Test func aPhoneIsFoundRangedAndBumps() throws {
        let pair = CorePair()
        #expect(Self.notified(pair.feed(.c, Self.write(Self.phoneA, [0xAB, 0xCD, 0x01], on: AccessoryGATTService.tokenCharacteristic))).isEmpty)

        let initialize = pair.feed(.c, Self.write(Self.phoneA, [0x0A]))
        let answers = Self.notified(initialize)
        #expect(answers.count == 1)
        #expect(answers.first?.0 == Self.phoneA && answers.first?.1 == Self.tx && answers.first?.2 == Self.accessoryConfiguration)
        let found = Self.events(initialize).compactMap { if case .peerFound(let f) = $0 { f } else { nil } }
        #expect(found.count == 1)
        let phone = try #require(found.first)
        #expect(phone.phone == Event.Phone(platform: .ios, token: "abcd01"))
        #expect(phone.rssi == nil && phone.name.isEmpty)
        #expect(phone.peer != CorePair.id(.r).description)

        let configure = pair.feed(.c, Self.write(Self.phoneA, [0x0B] + Self.shareable))
        let opens = Self.opened(configure)
        #expect(opens.count == 1)
        let open = try #require(opens.first)
        #expect(open.0 == Self.sessionID && open.2.description == phone.peer)
        #expect(open.1.first { $0.id == .dstMacAddress }?.value == [0x7A, 0x3C])
        #expect(open.1.first { $0.id == .staticSTSIV }?.value == [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        #expect(Self.notified(configure).isEmpty)

        // The board's ACTIVE, then the session manager's report: 0x02 once both are in.
        let token: UInt32 = 0x0000_0044
        // Other sessions' ACTIVEs first (a busy board): they do not keep the phone's out.
        for other in UInt32(0x100)..<0x114 { pair.feed(.c, Self.status(other, .active)) }
        #expect(Self.notified(pair.feed(.c, Self.status(token, .active))).isEmpty)
        let started = pair.feed(.c, .uwbSessions(.started(open.2, sessionID: Self.sessionID, token: token)))
        #expect(Self.notified(started).map(\.2) == [[0x02]])

        // Rounds: apart, then together until the rig decides the bump.
        var all: [Event.Body] = []
        let distances: [UInt16] = Array(repeating: 100, count: 10) + [100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 5, 2] + Array(repeating: 0, count: 10)
        for (index, centimetres) in distances.enumerated() {
            pair.advance(100)
            all += Self.events(pair.feed(.c, .tick))
            all += Self.events(pair.feed(.c, .ranges([Self.round(token, centimetres: centimetres, sequence: UInt32(index))])))
        }
        let ranges = all.compactMap { if case .range(let r) = $0 { r } else { nil } }
        #expect(ranges.count == distances.count && ranges.allSatisfy { $0.peer == phone.peer })
        #expect(all.contains { if case .near(let zone) = $0 { zone.peer == phone.peer } else { false } })
        let bumps = all.compactMap { if case .bump(let b) = $0 { b } else { nil } }
        #expect(bumps.count == 1)
        #expect(bumps.first?.peer == phone.peer && bumps.first?.cardJSON == "{}" && bumps.first?.bumpID == 1)
        #expect(bumps.first?.phone == Event.Phone(platform: .ios, token: "abcd01"))
        #expect(all.contains { if case .nearest(let n) = $0 { n.peer == phone.peer } else { false } })

        // 0x0C: the session is closed on the board; 0x03 once it reports DEINIT.
        let stop = pair.feed(.c, Self.write(Self.phoneA, [0x0C]))
        #expect(stop.contains { if case .closeUWB(let peer) = $0 { peer == open.2 } else { false } })
        #expect(Self.notified(stop).isEmpty)
        #expect(Self.notified(pair.feed(.c, Self.status(token, .idle))).isEmpty)
        let deinit_ = pair.feed(.c, Self.status(token, .deinitialized))
        #expect(Self.notified(deinit_).map(\.2) == [[0x03]])

        let gone = pair.feed(.c, .gatt(.closed(Self.phoneA)))
        #expect(Self.events(gone).contains { if case .peerLost(let lost) = $0 { lost.peer == phone.peer && lost.reason == .peerEnded } else { false } })
        // Its rounds no longer reach anyone.
        let late = Self.events(pair.feed(.c, .ranges([Self.round(token, centimetres: 50, sequence: 99)])))
        #expect(!late.contains { if case .range = $0 { true } else { false } })
    }

    /// A phone's `peer.found` and `bump`, as the core makes them, validate against the schema
    /// (with the independent `jsonschema`), and the schema refuses a phone's field without the
    /// rest: a bump that says `kind` without `decided_by`.
    @Test func phoneEventsValidateAgainstTheSchema() throws {
        let pair = CorePair()
        pair.feed(.c, Self.write(Self.phoneA, [0x01, 0x02], on: AccessoryGATTService.tokenCharacteristic))
        let found = Self.events(pair.feed(.c, Self.write(Self.phoneA, [0x0A])))
        let phone = try #require(found.compactMap { if case .peerFound(let f) = $0 { f } else { nil } }.first)
        let bump = Event.Body.bump(.init(peer: phone.peer, bumpID: 1, distance: 0.01, cardJSON: "{}", phone: phone.phone))
        let lines = (found + [bump]).enumerated().map { index, body in
            JSONLine.render(Event(node: CorePair.id(.c).description, body: body), seq: UInt64(index + 1), timestampMilliseconds: 1_800_000_000_000)
        }
        #expect(lines.first?.contains(#""kind":"phone","platform":"ios","token":"0102""#) == true)
        let valid = try validateAgainstSchema(lines)
        #expect(valid.status == 0, "\(valid.message)")
        let broken = lines[lines.count - 1].replacingOccurrences(of: #""decided_by":"rig","#, with: "")
        #expect(try validateAgainstSchema([broken]).status != 0)
    }

    /// A blob the board cannot range with (channel 7) gets no board command and no answer; the
    /// rigs' ranging goes on.
    @Test func aMalformedConfigurationCommandsNoBoard() {
        let pair = CorePair.ranging()
        var bad = Self.shareable
        bad[12] = 7  // channel
        let effects = pair.feed(.c, Self.write(Self.phoneA, [0x0B] + bad))
        #expect(Self.opened(effects).isEmpty && Self.notified(effects).isEmpty)
        #expect(!effects.contains { if case .closeUWB = $0 { true } else { false } })
        #expect(Self.events(effects).isEmpty)
        #expect(pair.rangesReach(.c))
    }

    /// With one session for phones (a budget of 2), a second phone waits while the first one's
    /// session is on the board: through its stop, until the board reports it DEINIT. A phone that
    /// disconnects gives its place up at once, its close going to the board before the next open.
    @Test func aSecondPhoneWaitsForTheFirstOnesSession() throws {
        var config = BridgeConfig()
        config.rangingSessions = 2
        let pair = CorePair(config: .init(both: config))
        let first = Self.opened(pair.feed(.c, Self.write(Self.phoneA, [0x0B] + Self.shareable)))
        #expect(first.count == 1)
        var other = Self.shareable
        other[7] = 0x99  // another session id: 0x0BADCA99
        #expect(Self.opened(pair.feed(.c, Self.write(Self.phoneB, [0x0B] + other))).isEmpty)
        pair.advance(100)
        #expect(Self.opened(pair.feed(.c, .tick)).isEmpty)

        let a = try #require(first.first?.2)
        pair.feed(.c, .uwbSessions(.started(a, sessionID: Self.sessionID, token: 0x51)))
        pair.feed(.c, Self.status(0x51, .active))
        #expect(Self.opened(pair.feed(.c, Self.write(Self.phoneA, [0x0C]))).isEmpty)
        pair.advance(100)
        #expect(Self.opened(pair.feed(.c, .tick)).isEmpty)
        let gone = pair.feed(.c, Self.status(0x51, .deinitialized))
        let second = Self.opened(gone)
        #expect(second.map(\.0) == [0x0BAD_CA99])
        let b = try #require(second.first?.2)

        // A third phone waits for B's place; B's phone goes away: its close, then the third's open.
        var third = Self.shareable
        third[7] = 0x77
        #expect(Self.opened(pair.feed(.c, Self.write(GATTClient("phone-c"), [0x0B] + third))).isEmpty)
        pair.feed(.c, .uwbSessions(.started(b, sessionID: 0x0BAD_CA99, token: 0x52)))
        let left = pair.feed(.c, .gatt(.closed(Self.phoneB)))
        let close = left.firstIndex { if case .closeUWB(let peer) = $0 { peer == b } else { false } }
        let open = left.firstIndex { if case .openPhoneUWB(let id, _, _) = $0 { id == 0x0BAD_CA77 } else { false } }
        #expect(close != nil && open != nil)
        if let close, let open { #expect(close < open) }
    }

    /// A board with one session, held by a rig: a phone that asks waits for the next tick, which
    /// takes the session from the rig (revoked) and opens the phone's behind the rig's close.
    @Test func aPhoneTakesTheSessionOfARigWhoseTurnIsOver() {
        var config = BridgeConfig()
        config.rangingSessions = 1
        let pair = CorePair(config: .init(both: config))
        pair.heard(.c)
        #expect(pair.isRanging(.c))
        pair.run(6_000)  // past the rig's turn
        let ask = pair.feed(.c, Self.write(Self.phoneA, [0x0B] + Self.shareable))
        #expect(Self.opened(ask).isEmpty)
        pair.advance(100)
        let tick = pair.feed(.c, .tick)
        let closeRig = tick.firstIndex { if case .closeUWB(let peer) = $0 { peer == CorePair.id(.r) } else { false } }
        let openPhone = tick.firstIndex { if case .openPhoneUWB = $0 { true } else { false } }
        #expect(closeRig != nil && openPhone != nil)
        if let closeRig, let openPhone { #expect(closeRig < openPhone) }
    }
}
