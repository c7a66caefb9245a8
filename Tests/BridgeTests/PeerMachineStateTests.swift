import BLE
@testable import Bridge
import PeerProtocol
import Testing

// What `PeerMachine`'s typed states changed: data that lives in one stage goes with it, inputs
// that no stage expects are refused, and a completion nobody asked for traps.

/// The two rigs of these tests: C (the lower peer id: it connects, controls, decides) and R.
private enum Fixture {
    static let group: UInt16 = 7
    static let c = PeerID(0x1111_0000_0000_0001)
    static let r = PeerID(0x9999_0000_0000_0002)
    static let cUWB: UInt16 = 0x0C0C
    static let rUWB: UInt16 = 0x0D0D
    static let rBLE = BLEAddress(bytes: [0x02, 0, 0, 0, 0, 0xD0])

    static func identity(_ id: PeerID) -> NodeIdentity {
        let name = id == c ? "Cee" : "Arr"
        return NodeIdentity(
            peerID: id, name: name, group: group, card: ProfileCard(name: "card of \(name)"), uwbShortAddress: id == c ? cUWB : rUWB)
    }
    static let advertOfR = Advertisement(group: group, peerID: r, uwbShortAddress: rUWB, capabilities: [.uwb, .oneToMany], psm: 0x85)
    static let helloOfC = PeerMessage.Hello(peerID: c, group: group, name: "Cee", versions: 0b11, capabilities: [.oneToMany])
    /// A one-to-one proposal from C to R.
    static func parameters(sessionID: UInt32 = 0x0BAD_F00D) -> PeerMessage.RangingParameters {
        .init(
            sessionID: sessionID, channel: 9, preambleCodeIndex: 10, controllerAddress: cUWB, controleeAddress: rUWB,
            vendorID: 0x1234, staticSTSIV: [1, 2, 3, 4, 5, 6], rangingIntervalMilliseconds: 100)
    }
    /// What a one-to-many controller's session manager hands out.
    static func sharedParameters() -> PeerMessage.RangingParameters {
        .init(
            sessionID: 0x5A5A_0001, channel: 9, preambleCodeIndex: 10, controllerAddress: cUWB, controleeAddress: rUWB,
            vendorID: 0x1234, staticSTSIV: [1, 2, 3, 4, 5, 6], rangingIntervalMilliseconds: 100, oneToManySlots: 7)
    }
}

extension PeerAction {
    fileprivate var isReport: Bool { if case .report = self { true } else { false } }
    fileprivate var isLog: Bool { if case .log = self { true } else { false } }
}

/// One machine alone, driven by hand: nothing answers its effects but the test.
private struct Lone {
    var machine: PeerMachine
    var now: Int64 = 0

    /// C's machine for R (`controller`), or R's for C.
    init(controller: Bool = true, controleesPerSession: Int = 1) {
        var config = BridgeConfig()
        config.controleesPerSession = controleesPerSession
        let (me, peer) = controller ? (Fixture.c, Fixture.r) : (Fixture.r, Fixture.c)
        machine = PeerMachine(peer: peer, identity: Fixture.identity(me), config: config, seed: 1, granted: true, now: 0)
    }

    /// What `input` asks for, without logs (and reports, unless asked).
    @discardableResult
    mutating func feed(_ input: PeerInput, reports: Bool = false) -> [PeerAction] {
        machine.receive(input, now: now).filter { !$0.isLog && (reports || !$0.isReport) }
    }

    /// As C: hears R, connects on `link` and, unless the link hangs, has it open; returns what
    /// the open link asked for (the hello and the proposal).
    @discardableResult
    mutating func connect(_ link: LinkID, opens: Bool = true) -> [PeerAction] {
        feed(.heard(Fixture.advertOfR, name: nil, address: Fixture.rBLE, rssi: -80))
        feed(.connectStarted(link))
        return opens ? feed(.outgoingLinkOpened(link, rangingSecret: nil)) : []
    }

    /// As R: C connected on `link` and proposed `parameters`.
    mutating func accept(_ parameters: PeerMessage.RangingParameters, on link: LinkID) -> [PeerAction] {
        feed(.incomingHello(link, Fixture.helloOfC, retryAfter: 0, rangingSecret: nil))
        return feed(.message(.rangingParameters(parameters), on: link, ProximityView()))
    }

    mutating func report() -> SessionReport? {
        for case .report(let report) in feed(.tick(ProximityView()), reports: true) { return report }
        return nil
    }
}

@Suite struct PeerMachineStateTests {
    @Test func aConnectionNobodyAskedForIsClosedAndChangesNothing() throws {
        var c = Lone()
        var proposed: PeerMessage.RangingParameters?
        for case .send(.rangingParameters(let parameters), on: 1) in c.connect(1) { proposed = parameters }
        let sessionID = try #require(proposed).sessionID
        #expect(c.feed(.message(.parametersAccepted(sessionID: sessionID), on: 1, ProximityView())).contains { if case .openUWB = $0 { true } else { false } })
        c.feed(.uwbStarted(sessionID: sessionID, token: 1))
        #expect(c.machine.stage == .ranging(1))
        #expect(c.feed(.connectStarted(999)) == [.disconnect(999)])
        #expect(c.machine.stage == .ranging(1))
    }

    @Test func aMessageBeforeTheLinkIsUpClosesIt() throws {
        var c = Lone()
        c.connect(1, opens: false)
        #expect(c.machine.stage == .connecting(1))
        #expect(c.feed(.message(.hello(Fixture.helloOfC), on: 1, ProximityView())) == [.disconnect(1), .unbindLink(1)])
        #expect(c.machine.stage == .discovered)
    }

    @Test func theProposalGoesWithItsLink() {
        var c = Lone()
        c.connect(1)
        #expect(c.machine.stage == .negotiating(1))
        #expect(c.feed(.linkClosed(1)) == [.unbindLink(1)])
        c.now += 10 * BridgeConfig().retransmitMilliseconds
        #expect(c.feed(.tick(ProximityView())) == [])
    }

    @Test func aReservedPlaceGoesWithItsLink() {
        var c = Lone(controleesPerSession: 2)
        c.connect(1)
        let parameters = Fixture.sharedParameters()
        let proposal = c.feed(.sharedPlaceReserved(parameters))
        #expect(proposal.last == .send(.rangingParameters(parameters), on: 1))
        #expect(c.report()?.sharedSession == parameters.sessionID)
        #expect(c.feed(.linkClosed(1)) == [.unbindLink(1), .closeUWB])
        #expect(c.report()?.sharedSession == nil)
    }

    @Test func aPlaceThatComesAfterItsLinkClosedIsGivenBack() {
        var c = Lone(controleesPerSession: 2)
        c.connect(1)
        c.feed(.linkClosed(1))
        #expect(c.feed(.sharedPlaceReserved(Fixture.sharedParameters())) == [.closeUWB])
    }

    @Test func aPlaceNobodyAskedForTraps() async {
        await #expect(processExitsWith: .failure) {
            var c = Lone(controleesPerSession: 2)
            c.connect(1)
            let parameters = Fixture.sharedParameters()
            c.feed(.sharedPlaceReserved(parameters))
            c.feed(.sharedPlaceReserved(parameters))
        }
    }

    @Test func aControleeGivenAnotherSessionWhileRangingStartsItAndKeepsRanging() throws {
        var r = Lone(controller: false)
        let first = Fixture.parameters()
        _ = r.accept(first, on: 1)
        #expect(r.feed(.uwbStarted(sessionID: first.sessionID, token: 1)).last == .send(.parametersAccepted(sessionID: first.sessionID), on: 1))
        #expect(r.machine.stage == .ranging(1))
        let second = Fixture.parameters(sessionID: first.sessionID &+ 1)
        let request = UWBSessionRequest(parameters: second, asController: false, shared: false)
        #expect(r.feed(.message(.rangingParameters(second), on: 1, ProximityView())).prefix(3) == [.route(nil), .closeUWB, .openUWB(request)])
        #expect(r.machine.stage == .ranging(1))
        // It starts while ranging: nothing is said; only a repeat of the proposal is answered.
        #expect(!r.feed(.uwbStarted(sessionID: second.sessionID, token: 2)).contains { if case .send = $0 { true } else { false } })
        #expect(r.feed(.message(.rangingParameters(second), on: 1, ProximityView())) == [.send(.parametersAccepted(sessionID: second.sessionID), on: 1)])
    }

    @Test func aLostBoardLeavesANegotiationAlone() throws {
        var r = Lone(controller: false)
        let parameters = Fixture.parameters()
        #expect(r.accept(parameters, on: 1).contains { if case .openUWB = $0 { true } else { false } })
        #expect(r.machine.stage == .negotiating(1))
        #expect(r.feed(.uwbLost) == [])
        #expect(r.feed(.uwbStarted(sessionID: parameters.sessionID, token: 1)).last == .send(.parametersAccepted(sessionID: parameters.sessionID), on: 1))
    }
}
