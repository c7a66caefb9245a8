import BLE
@testable import Bridge
import Events
import PeerProtocol
import Testing
import UCI
import UCIHost

// Ranging parameters, the UWB sessions they start, and what happens when a board fails to start
// one, ends one, or goes away (docs/PROTOCOL.md, "Timers and state machines"), on two `NodeCore`s
// wired back to back by `CorePair`.
@Suite struct NodeCoreSessionTests {
    typealias Pair = CorePair
    static let retransmit = BridgeConfig().retransmitMilliseconds
    /// The wait after a first failed start (then doubling up to 30 s).
    static let firstRetry: Int64 = 1_000

    // MARK: Negotiation

    @Test func theInitiatorRepeatsHelloAndParametersUntilAccepted() throws {
        let pair = Pair()
        pair.uwbOutcome.r = .waits
        pair.heard(.c)
        pair.run(1_000)
        let expectedTimes = stride(from: Pair.start, through: Pair.start + 1_000, by: Int(Self.retransmit)).map { $0 }
        #expect(pair.sent(.c, .hello).map(\.at) == expectedTimes)
        #expect(pair.sent(.c, .rangingParameters).map(\.at) == expectedTimes)
        let proposals = pair.sent(.c, .rangingParameters).map(\.message)
        #expect(proposals.allSatisfy { $0 == proposals.first })  // the same proposal every time
        // The controlee accepts only once its session runs, and opens it once whatever the repeats.
        #expect(pair.uwbRequests.r.count == 1)
        #expect(pair.sent(.r, .parametersAccepted).isEmpty)
        let rLink = try #require(pair.link(.r))
        let session = try #require(pair.proposed).sessionID
        #expect(pair.answerUWB(.r).radio.last == .send(Pair.frame(.parametersAccepted(sessionID: session)), on: rLink))
        let mark = pair.mark
        pair.run(1_000)
        #expect(pair.sent(.c, since: mark).isEmpty)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    @Test func aRepeatedProposalForTheRunningSessionIsAcceptedAgain() throws {
        let pair = Pair()
        pair.network = { $0.kind == .parametersAccepted && $0.kindIndex == 0 ? 0 : 1 }
        pair.heard(.c)
        #expect(pair.isRanging(.r) && !pair.isRanging(.c))
        pair.run(Self.retransmit)
        let session = try #require(pair.proposed).sessionID
        #expect(pair.sent(.r, .parametersAccepted).map(\.message) == Array(repeating: .parametersAccepted(sessionID: session), count: 2))
        #expect(pair.uwbRequests.r.count == 1)
        #expect(pair.uwbRequests.c.count == 1)
        #expect(pair.isRanging(.c))
    }

    @Test(arguments: [Pair.UWBOutcome.starts, .waits]) func aRepeatedAcceptanceIsIgnored(controllerBoard: Pair.UWBOutcome) throws {
        let pair = Pair()
        pair.uwbOutcome.c = controllerBoard
        pair.network = { $0.kind == .parametersAccepted ? 2 : 1 }
        pair.heard(.c)
        #expect(pair.uwbRequests.c.count == 1)
        #expect(pair.disconnects(.c).isEmpty)
        let session = try #require(pair.proposed).sessionID
        #expect(pair.inject(.parametersAccepted(sessionID: session), to: .c) == [])
    }

    @Test func aControleeWhoseStartFailedRetriesWhenTheControllerRepeats() throws {
        let pair = Pair()
        pair.uwbOutcome.r = .fails
        pair.heard(.c)
        #expect(pair.uwbRequests.r.count == 1)
        #expect(pair.sent(.r, .parametersAccepted).isEmpty)
        #expect(pair.link(.r) != nil)  // a failed start does not close the link
        pair.uwbOutcome.r = .starts
        pair.run(Self.firstRetry - Self.retransmit)
        #expect(pair.uwbRequests.r.count == 1, "the controller's repeats are not taken while backing off")
        pair.run(2 * Self.retransmit)
        try #require(pair.uwbRequests.r.count == 2)
        #expect(pair.uwbRequests.r[0] == pair.uwbRequests.r[1])
        #expect(pair.isRanging(.r) && pair.isRanging(.c))
    }

    @Test func aControllerWhoseStartFailedProposesAgain() throws {
        let pair = Pair()
        pair.uwbOutcome.c = .fails
        pair.heard(.c)
        #expect(pair.uwbRequests.c.count == 1)
        #expect(pair.isRanging(.r) && !pair.isRanging(.c))
        pair.uwbOutcome.c = .starts
        let mark = pair.mark
        pair.run(Self.firstRetry - Self.retransmit)
        #expect(pair.sent(.c, since: mark).isEmpty, "no new proposal while backing off")
        pair.run(Self.retransmit)
        let parameters = try #require(pair.proposed)
        #expect(pair.sent(.c, since: mark).map(\.message) == [Pair.hello(.c), .rangingParameters(parameters)])
        #expect(pair.sent(.r, .parametersAccepted, since: mark).count == 1)
        try #require(pair.uwbRequests.c.count == 2)
        #expect(pair.uwbRequests.c[0] == pair.uwbRequests.c[1])
        #expect(pair.uwbRequests.r.count == 1)
        #expect(pair.isRanging(.c))
    }

    /// A board that refuses every start (issue 16: SESSION_INIT five times a second for over a
    /// minute): the controller proposes again after 1, 2, 4, 8, 16 and then every 30 s, and
    /// once the board works, the next attempt ranges.
    @Test func failedStartsAreRetriedWithBackOff() throws {
        let pair = Pair()
        pair.uwbOutcome.c = .fails
        pair.heard(.c)
        pair.run(120_000, step: 100, adverts: true)  // adverts: the peers stay found
        let attempts = pair.records.filter { $0.side == .c && { if case .openUWB = $0 { true } else { false } }($0.effect) }.map(\.at)
        let gaps = zip(attempts.dropFirst(), attempts).map { $0 - $1 }
        #expect(attempts.count == 8, "\(attempts)")
        for (gap, delay) in zip(gaps, [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000] as [Int64]) {
            #expect(gap >= delay && gap < delay + 2 * Self.retransmit, "gaps \(gaps)")
        }
        pair.uwbOutcome.c = .starts
        pair.run(31_000, step: 100, adverts: true)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// Starts that failed while the board was going bad say nothing about the board that comes
    /// back after a reset: the peer tries at once, not after the rest of its 30 s back-off.
    @Test func aBoardThatComesBackEndsTheBackOff() throws {
        let pair = Pair()
        pair.uwbOutcome.c = .fails
        pair.heard(.c)
        pair.run(40_000, step: 100, adverts: true)  // six failures: the next attempt is 30 s away
        pair.uwbOutcome.c = .starts
        #expect(pair.feed(.c, .uwb(.closed(.closed))).radio == [.forgetBoardSessions])
        pair.feed(.c, .uwbSessions(.boardReady(Pair.board(provisionedSTS: false))))
        pair.run(1_000, step: 100, adverts: true)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    // MARK: The board

    @Test(arguments: Side.allCases) func aSessionEndedByTheBoardRestartsFromDiscovery(side: Side) throws {
        let pair = Pair.ranging()
        let link = try #require(pair.link(side))
        let first = try #require(pair.proposed)
        let token = try #require(pair.running[side]).token
        let mark = pair.mark
        let ended = UCINotification.sessionStatus(session: token, state: .idle, reason: .maxRangingRoundRetryCountReached)
        #expect(pair.feed(side, .uwb(.notification(ended))).radio == [.disconnect(link), .closeUWB(Pair.id(side.other))])
        #expect(pair.radio(side.other, since: mark) == [.closeUWB(Pair.id(side))])
        #expect(pair.link(.c) == nil && pair.link(.r) == nil)
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        #expect(pair.proposed?.sessionID != first.sessionID)
    }

    /// A session the board ends because its commands did (state change with session management
    /// commands) is not the board's doing: the link stays.
    @Test(arguments: Side.allCases) func aSessionStoppedByItsOwnCommandsIsNotAnEnd(side: Side) throws {
        let pair = Pair.ranging()
        let token = try #require(pair.running[side]).token
        let stopped = UCINotification.sessionStatus(session: token, state: .idle, reason: .stateChangeWithSessionManagementCommands)
        #expect(pair.feed(side, .uwb(.notification(stopped))) == [])
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    @Test(arguments: Side.allCases) func aBoardThatComesBackResumesTheSameSession(side: Side) throws {
        let pair = Pair.ranging()
        let request = try #require(pair.uwbRequests[side].last)
        let oldToken = try #require(pair.running[side]).token
        let mark = pair.mark
        #expect(pair.feed(side, .uwb(.closed(.closed))).radio == [.forgetBoardSessions])
        #expect(!pair.rangesReach(side, token: oldToken))  // its rounds lead nowhere now
        pair.uwbOutcome[side] = .waits
        #expect(pair.feed(side, .uwbSessions(.boardReady(Pair.board(provisionedSTS: false)))).radio == [.openUWB(request, for: Pair.id(side.other))])
        #expect(pair.answerUWB(side).radio == [])
        #expect(pair.running[side]?.token != oldToken)
        #expect(pair.rangesReach(side))  // the new session's rounds reach the peer
        #expect(pair.sent(.c, since: mark).isEmpty && pair.sent(.r, since: mark).isEmpty)  // no renegotiation
        #expect(pair.isRanging(side))
    }

    @Test(arguments: Side.allCases) func aStaleSessionStartIsIgnored(side: Side) throws {
        let pair = Pair()
        pair.uwbOutcome[side] = .waits
        pair.heard(.c)
        let peer = Pair.id(side.other)
        let old = try #require(pair.uwbRequests[side].last).parameters.sessionID
        pair.breakLink()
        #expect(pair.feed(side, .uwbSessions(.started(peer, sessionID: old, token: 0xDEAD))) == [])
        #expect(pair.feed(side, .uwbSessions(.failed(peer, sessionID: old, error: .closed))) == [])
        // Connected again, and opening the new session: the old one's start is still not it.
        pair.heard(.c)
        let new = try #require(pair.uwbRequests[side].last).parameters.sessionID
        try #require(new != old)
        #expect(pair.feed(side, .uwbSessions(.started(peer, sessionID: old, token: 0xDEAD))) == [])
        #expect(pair.feed(side, .uwbSessions(.failed(peer, sessionID: old, error: .closed))) == [])
        #expect(!pair.rangesReach(side, token: 0xDEAD))
        pair.answerUWB(side)
        #expect(pair.rangesReach(side))
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    // MARK: One-to-many

    @Test func aOneToManyControllerProposesItsSharedSession() throws {
        var config = BridgeConfig()
        config.controleesPerSession = 4
        let pair = Pair(config: .init(c: config, r: .init()))
        pair.heard(.c)
        let shared = Pair.sharedParameters(controlee: Pair.uwbAddress(.r))
        let cLink = try #require(pair.link(.c))
        #expect(
            Array(pair.radio(.c).prefix(5)) == [
                .connect(Pair.bleAddress(.r), for: Pair.id(.r)), .reserveSharedPlace(controlee: Pair.uwbAddress(.r), for: Pair.id(.r)),
                .send(Pair.frame(Pair.hello(.c)), on: cLink), .send(Pair.frame(.rangingParameters(shared)), on: cLink),
                .openUWB(.init(parameters: shared, asController: true, shared: true), for: Pair.id(.r)),
            ])
        #expect(pair.uwbRequests.r == [.init(parameters: shared, asController: false, shared: false)])
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        // The place is given back with the link (the old test read the scheduler's report of it).
        let mark = pair.mark
        pair.breakLink()
        #expect(pair.radio(.c, since: mark) == [.closeUWB(Pair.id(.r))])
    }

    @Test func aPlaceReservedAfterTheLinkClosedIsGivenBack() {
        var config = BridgeConfig()
        config.controleesPerSession = 4
        let pair = Pair(config: .init(c: config, r: .init()))
        pair.reservesPlaces = false
        pair.heard(.c)
        pair.breakLink()
        #expect(pair.answerReservation(.c).radio == [.closeUWB(Pair.id(.r))])
    }
}
