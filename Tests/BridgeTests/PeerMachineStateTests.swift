import BLE
@testable import Bridge
import PeerProtocol
import Testing

// What `PeerMachine`'s typed states changed: data that lives in one stage goes with it, inputs
// that no stage expects are refused, and a completion nobody asked for traps.

/// C's machine alone, driven by hand: `PeerPair` answers every effect, these tests must not.
private struct Controller {
    var machine: PeerMachine
    var now: Int64 = 0

    init(controleesPerSession: Int = 1) {
        var config = BridgeConfig()
        config.controleesPerSession = controleesPerSession
        machine = PeerMachine(peer: PeerPair.id(.r), identity: PeerPair.identity(.c), config: config, seed: 1, granted: true, now: 0)
    }

    /// What `input` asks for, without logs (and reports, unless asked).
    @discardableResult
    mutating func feed(_ input: PeerInput, reports: Bool = false) -> [PeerAction] {
        machine.receive(input, now: now).filter { !$0.isLog && (reports || !$0.isReport) }
    }

    /// Hears R, connects on `link` and, unless the link hangs, has it open.
    mutating func connect(_ link: LinkID, opens: Bool = true) {
        feed(.heard(PeerPair.advert(.r), name: nil, address: PeerPair.bleAddress(.r), rssi: -80))
        feed(.connectStarted(link))
        if opens { feed(.outgoingLinkOpened(link, rangingSecret: nil)) }
    }

    mutating func report() -> SessionReport? {
        for case .report(let report) in feed(.tick(ProximityView()), reports: true) { return report }
        return nil
    }
}

@Suite struct PeerMachineStateTests {
    typealias Pair = PeerPair

    @Test func aConnectionNobodyAskedForIsClosedAndChangesNothing() throws {
        let pair = Pair.ranging()
        let link = try #require(pair.link(.c))
        #expect(pair.feed(.c, .connectStarted(999)) == [.disconnect(999)])
        #expect(pair.machine(.c).stage == .ranging(link))
    }

    @Test func aMessageBeforeTheLinkIsUpClosesIt() throws {
        let pair = Pair()
        pair.connectOutcome = .hangs
        pair.heard(.c)
        let link = try #require(pair.link(.c))
        #expect(pair.machine(.c).stage == .connecting(link))
        #expect(pair.feed(.c, .message(Pair.hello(.r), on: link, pair.views[.c])) == [.disconnect(link), .unbindLink(link)])
        #expect(pair.machine(.c).stage == .discovered)
    }

    @Test func theProposalGoesWithItsLink() {
        var c = Controller()
        c.connect(1)
        #expect(c.machine.stage == .negotiating(1))
        #expect(c.feed(.linkClosed(1)) == [.unbindLink(1)])
        c.now += 10 * BridgeConfig().retransmitMilliseconds
        #expect(c.feed(.tick(ProximityView())) == [])
    }

    @Test func aReservedPlaceGoesWithItsLink() {
        var c = Controller(controleesPerSession: 2)
        c.connect(1)
        let parameters = Pair.sharedParameters(controlee: Pair.uwbAddress(.r))
        let proposal = c.feed(.sharedPlaceReserved(parameters))
        #expect(proposal.last == .send(.rangingParameters(parameters), on: 1))
        #expect(c.report()?.sharedSession == parameters.sessionID)
        #expect(c.feed(.linkClosed(1)) == [.unbindLink(1), .closeUWB])
        #expect(c.report()?.sharedSession == nil)
    }

    @Test func aPlaceThatComesAfterItsLinkClosedIsGivenBack() {
        var c = Controller(controleesPerSession: 2)
        c.connect(1)
        c.feed(.linkClosed(1))
        #expect(c.feed(.sharedPlaceReserved(Pair.sharedParameters(controlee: Pair.uwbAddress(.r)))) == [.closeUWB])
    }

    @Test func aPlaceNobodyAskedForTraps() async {
        await #expect(processExitsWith: .failure) {
            var c = Controller(controleesPerSession: 2)
            c.connect(1)
            let parameters = PeerPair.sharedParameters(controlee: PeerPair.uwbAddress(.r))
            c.feed(.sharedPlaceReserved(parameters))
            c.feed(.sharedPlaceReserved(parameters))
        }
    }

    @Test func aControleeGivenAnotherSessionWhileRangingStartsItAndKeepsRanging() throws {
        let pair = Pair.ranging()
        let link = try #require(pair.link(.r))
        var parameters = try #require(pair.proposed)
        parameters.sessionID &+= 1
        let request = UWBSessionRequest(parameters: parameters, asController: false, shared: false)
        #expect(pair.inject(.rangingParameters(parameters), to: .r).prefix(3) == [.route(nil), .closeUWB, .openUWB(request)])
        #expect(pair.machine(.r).stage == .ranging(link))
        // Its session runs at once (`PeerPair` starts it): only a repeat is answered.
        #expect(pair.sent(.r, .parametersAccepted).count == 1)
        #expect(pair.inject(.rangingParameters(parameters), to: .r) == [.send(.parametersAccepted(sessionID: parameters.sessionID), on: link)])
    }

    @Test func aLostBoardLeavesANegotiationAlone() throws {
        let pair = Pair()
        pair.uwbOutcome[.r] = .waits
        pair.heard(.c)
        let link = try #require(pair.link(.r))
        #expect(pair.machine(.r).stage == .negotiating(link))
        #expect(pair.feed(.r, .uwbLost) == [])
        #expect(pair.answerUWB(.r).last == .send(.parametersAccepted(sessionID: try #require(pair.proposed).sessionID), on: link))
    }
}
