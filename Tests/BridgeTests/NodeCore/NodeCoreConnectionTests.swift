import BLE
@testable import Bridge
import Events
import PeerProtocol
import PeerSecurity
import Testing
import UCI

extension Array where Element == NodeEffect {
    /// The radio effects: events left out.
    var radio: [NodeEffect] { filter { if case .emit = $0 { false } else { true } } }
}

extension CorePair {
    /// `side`'s hello as a v1 link carries it (peer id, group and name; no versions or capabilities).
    static func hello(_ side: Side) -> PeerMessage {
        .hello(.init(peerID: id(side), group: group, name: name(side)))
    }
    /// How `message` goes on a v1 link.
    static func frame(_ message: PeerMessage) -> [UInt8] { message.encoded() }
}

// Discovery, roles, the link's first messages and what makes a side close it (docs/PROTOCOL.md,
// "Peer channel"), on two `NodeCore`s wired back to back by `CorePair`.
@Suite struct NodeCoreConnectionTests {
    typealias Pair = CorePair
    static let retransmit = BridgeConfig().retransmitMilliseconds
    static let connectTimeout = BridgeConfig().connectTimeoutMilliseconds

    // MARK: Roles

    @Test func onlyTheLowerPeerIDConnects() {
        let pair = Pair()
        for _ in 0..<5 {
            pair.advance(100)
            #expect(pair.heard(.r).radio == [])
        }
        // R never connects, so there is no link (PeerMachine's stage was the old test's check).
        #expect(pair.link(.r) == nil && pair.records.allSatisfy { $0.side == .c || !$0.effect.isConnect })
        pair.connectOutcome = .hangs
        #expect(pair.heard(.c).radio == [.connect(Pair.bleAddress(.r), for: Pair.id(.r))])
    }

    /// C's scheduler has one session, held by a rig it heard first: C connects to R only once
    /// the scheduler picks R (after the other rig's turn), not on R's adverts.
    @Test func theInitiatorConnectsOnlyToAPeerItHasPicked() {
        var config = BridgeConfig()
        config.rangingSessions = 1
        let pair = Pair(config: .init(c: config, r: .init()))
        pair.connectOutcome = .hangs
        pair.addDecoy(id: 0x5555_0000_0000_0005, heardBy: .c)
        #expect(!pair.heard(.c).contains(.connect(Pair.bleAddress(.r), for: Pair.id(.r))))
        let mark = pair.mark
        pair.run(5_000, adverts: true)
        #expect(pair.connects(since: mark) == [Pair.start + 5_000])
    }

    /// hello → rangingParameters → hello → parametersAccepted → both sessions, every effect in order.
    @Test func helloThenParametersThenRanging() throws {
        let pair = Pair()
        pair.heard(.c)
        let parameters = try #require(pair.proposed)
        let (cLink, rLink) = (try #require(pair.link(.c)), try #require(pair.link(.r)))
        #expect(parameters.controllerAddress == Pair.uwbAddress(.c))
        #expect(parameters.controleeAddress == Pair.uwbAddress(.r))
        #expect(parameters.oneToManySlots == nil)
        #expect(
            pair.radio(.c) == [
                .connect(Pair.bleAddress(.r), for: Pair.id(.r)), .send(Pair.frame(Pair.hello(.c)), on: cLink),
                .send(Pair.frame(.rangingParameters(parameters)), on: cLink),
                .openUWB(.init(parameters: parameters, asController: true, shared: false), for: Pair.id(.r)),
            ])
        #expect(
            pair.radio(.r) == [
                .send(Pair.frame(Pair.hello(.r)), on: rLink),
                .openUWB(.init(parameters: parameters, asController: false, shared: false), for: Pair.id(.c)),
                .send(Pair.frame(.parametersAccepted(sessionID: parameters.sessionID)), on: rLink),
            ])
        // Each side routes its board's rounds to the other (the old test read the routes).
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        #expect(pair.rangesReach(.c) && pair.rangesReach(.r))
        // Names: C's from R's advert, R's from C's hello (the old test read the machines' names).
        #expect(pair.found(.c) == [.init(peer: Pair.id(.r).description, name: Pair.name(.r), rssi: -80)])
        #expect(pair.found(.r) == [.init(peer: Pair.id(.c).description, name: Pair.name(.c), rssi: nil)])
    }

    /// On a v2 link both sides derive the session's STS values from the channel's secret: no
    /// frame carries them in the clear, and both sessions get the same ones, fresh for each
    /// session id.
    @Test func onAV2LinkSTSValuesAreDerivedNotSent() throws {
        let pair = Pair(secure: true)
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        let (cLink, rLink) = (try #require(pair.link(.c)), try #require(pair.link(.r)))
        let secret = try #require(pair.channels.c.rangingSecret(cLink))
        #expect(pair.channels.r.rangingSecret(rLink) == secret)
        let controller = try #require(pair.uwbRequests.c.last), controlee = try #require(pair.uwbRequests.r.last)
        let parameters = controller.parameters
        let keys = RangingKeys(rangingSecret: secret, sessionID: parameters.sessionID)
        #expect(parameters.vendorID == keys.vendorID && parameters.staticSTSIV == keys.staticSTSIV)
        #expect(controlee.parameters == parameters)
        let wire = PeerMessage.rangingParameters(parameters).encoded(version: .v2)
        #expect(wire.count == 4 + 4 + 1 + 1 + 2 + 2 + 2 + 1, "session, channel, preamble, addresses, interval, slots: no STS values")
        // Every frame on the link is a v2 one: nothing in the clear.
        #expect(!pair.frames(.c).isEmpty && pair.frames(.c).allSatisfy { SecureFrame.isVersion2($0.frame) })
        #expect(pair.frames(.r).allSatisfy { SecureFrame.isVersion2($0.frame) })
        #expect(RangingKeys(rangingSecret: secret, sessionID: parameters.sessionID &+ 1) != keys)
    }

    /// A peer whose advert has no name (as a v2 peer's never has) is named from its `hello`,
    /// once (`peer.named`), however often the hello is repeated.
    @Test func aPeerWithoutAnAdvertisedNameIsNamedOnceByItsHello() throws {
        let pair = Pair()
        pair.advertisesName = .init(both: false)
        pair.network = { $0.kind == .parametersAccepted && $0.kindIndex < 3 ? 0 : 1 }  // hello repeated
        pair.heard(.r)
        pair.heard(.c)
        pair.run(2_000)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        #expect(pair.sent(.c, .hello).count > 1)
        for side in Side.allCases {
            #expect(pair.found(side).map(\.name) == [""])
            let named = pair.events(side).compactMap { body -> Event.PeerNamed? in
                if case .peerNamed(let named) = body { named } else { nil }
            }
            #expect(named == [.init(peer: Pair.id(side.other).description, name: Pair.name(side.other))])
        }
    }

    /// Provisioned STS only when both boards run it and the link is v2: the controller says so
    /// in its `hello`, and both sessions get the same derived session key instead of vendor id
    /// and IV; otherwise both use static STS.
    @Test(arguments: [(true, true, true, true), (true, false, true, false), (false, true, true, false), (true, true, false, false)])
    func provisionedSTSOnlyWhenBothBoardsRunItOnAV2Link(c: Bool, r: Bool, v2: Bool, expected: Bool) throws {
        let pair = Pair(secure: v2, provisionedSTS: .init(c: c, r: r))
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        let controller = try #require(pair.uwbRequests.c.last), controlee = try #require(pair.uwbRequests.r.last)
        let sts: SessionSTS
        if expected {
            let cLink = try #require(pair.link(.c))
            let secret = try #require(pair.channels.c.rangingSecret(cLink))
            sts = .provisioned(sessionKey: RangingKeys(rangingSecret: secret, sessionID: controller.parameters.sessionID).sessionKey)
        } else {
            sts = .fromParameters
        }
        // The controller's hello, sealed, is not read here (the old test read its capabilities):
        // the controlee's session follows what it said.
        #expect(controller.sts == sts && controlee.sts == sts)
    }

    /// Round hopping only when both boards hop, the controller's config lets it, and the link is
    /// v2: the controlee learns it only from the controller's sealed `hello`, so both sessions
    /// asking for HOPPING_MODE 1 (or both for 0) shows the flag crossed; a one-sided hop would
    /// leave two boards that never hear each other.
    @Test(arguments: [
        (true, true, true, true, true), (true, false, true, true, false), (false, true, true, true, false),
        (true, true, false, true, false), (true, true, true, false, false),
    ])
    func roundsHopOnlyWhenBothBoardsHopOnAV2Link(c: Bool, r: Bool, v2: Bool, allowed: Bool, expected: Bool) throws {
        var config = BridgeConfig()
        config.uwb.hopsRounds = allowed
        let pair = Pair(config: .init(c: config, r: BridgeConfig()), secure: v2, hopping: .init(c: c, r: r))
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        let controller = try #require(pair.uwbRequests.c.last), controlee = try #require(pair.uwbRequests.r.last)
        #expect(controller.hops == expected && controlee.hops == expected)
    }

    @Test func theControleeRefusesParametersNamingAnotherUWBAddress() throws {
        let pair = Pair()
        pair.network = { $0.kind == .rangingParameters ? 0 : 1 }
        pair.heard(.c)
        let (cLink, rLink) = (try #require(pair.link(.c)), try #require(pair.link(.r)))
        var parameters = try #require(pair.proposed)
        parameters.controleeAddress = 0xBEEF
        #expect(pair.inject(.rangingParameters(parameters), to: .r).radio == [.disconnect(rLink)])
        #expect(pair.uwbRequests.r.isEmpty)
        #expect(pair.link(.r) == nil && pair.link(.c) == nil)
        // C heard its link close: it repeats nothing on it.
        let mark = pair.mark
        pair.run(1_000)
        #expect(pair.frames(.c, since: mark).filter { $0.link == cLink }.isEmpty)
    }

    @Test func theControllerRefusesParametersSentToIt() throws {
        let pair = Pair.ranging()
        let cLink = try #require(pair.link(.c))
        let parameters = try #require(pair.proposed)
        let mark = pair.mark
        #expect(pair.inject(.rangingParameters(parameters), to: .c).radio == [.disconnect(cLink), .closeUWB(Pair.id(.r))])
        // R's link closed under it: its session stops (the old test read R's stage).
        #expect(pair.radio(.r, since: mark) == [.closeUWB(Pair.id(.c))])
        #expect(pair.link(.r) == nil)
    }

    @Test(arguments: Side.allCases) func acceptanceOfAnUnknownSessionIsAViolation(side: Side) throws {
        let pair = Pair.ranging()
        let link = try #require(pair.link(side))
        let unknown = try #require(pair.proposed).sessionID &+ 1
        let mark = pair.mark
        #expect(pair.inject(.parametersAccepted(sessionID: unknown), to: side).radio == [.disconnect(link), .closeUWB(Pair.id(side.other))])
        #expect(pair.link(side.other) == nil)
        #expect(pair.radio(side.other, since: mark) == [.closeUWB(Pair.id(side))])
    }

    // MARK: Connection attempts

    @Test func aConnectionThatNeverOpensIsAbandonedAndTriedAgain() throws {
        let pair = Pair()
        pair.connectOutcome = .hangs
        pair.heard(.c)
        let link = try #require(pair.lastAttempt(.c))
        pair.advance(Self.connectTimeout - 1)
        #expect(pair.heard(.c).radio == [])  // no second attempt while one is under way
        #expect(pair.feed(.c, .tick).radio == [])
        pair.advance(1)
        #expect(pair.feed(.c, .tick).radio == [.disconnect(link)])
        // It opens after all: C closes it at once and says nothing on it.
        let mark = pair.mark
        pair.openLate(link, on: .c)
        #expect(pair.radio(.c, since: mark) == [.disconnect(link)])
        pair.connectOutcome = .opens
        #expect(pair.heard(.c).radio.first == .connect(Pair.bleAddress(.r), for: Pair.id(.r)))
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// The adapter refuses a connection at once (`.connectFailed`, e.g. the controller is out of
    /// connections): no link was named, nothing is under way, and the next advert tries again.
    @Test func aRefusedConnectionIsTriedAgainAtTheNextAdvert() {
        let pair = Pair()
        pair.connectOutcome = .fails
        #expect(pair.heard(.c).radio == [.connect(Pair.bleAddress(.r), for: Pair.id(.r))])
        #expect(pair.lastAttempt(.c) == nil)
        #expect(pair.feed(.c, .tick).radio == [])
        pair.connectOutcome = .opens
        pair.advance(100)
        #expect(pair.heard(.c).radio.first == .connect(Pair.bleAddress(.r), for: Pair.id(.r)))
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }
}

extension NodeEffect {
    var isConnect: Bool { if case .connect = self { true } else { false } }
}
