import BLE
@testable import Bridge
import Events
import PeerProtocol
import Testing
import UCI

// `busy`, retry-after and the ranging scheduler's grants and revocations (docs/PROTOCOL.md,
// "Peer channel"), on two `NodeCore`s wired back to back by `CorePair`. A side without a session
// for its peer is one whose only session (`rangingSessions` 1) went to a third rig it heard
// first (a decoy: adverts only); the scheduler hands it over after that rig's 5 s turn.
@Suite struct NodeCoreSchedulingTests {
    typealias Pair = CorePair
    static let decoy: UInt64 = 0x5555_0000_0000_0005

    static func oneSession() -> BridgeConfig {
        var config = BridgeConfig()
        config.rangingSessions = 1
        return config
    }

    /// A pair whose controlee (and, with `controllerToo`, controller) has one session, taken
    /// by a decoy it heard first.
    static func busyPair(controllerToo: Bool = false) -> Pair {
        let pair = Pair(config: .init(c: controllerToo ? oneSession() : .init(), r: oneSession()))
        pair.addDecoy(id: decoy, heardBy: .r)
        if controllerToo { pair.addDecoy(id: decoy + 1, heardBy: .c) }
        return pair
    }

    static func frame(_ message: PeerMessage) -> [UInt8] { message.encoded() }

    // MARK: Busy

    @Test func aResponderWithoutAGrantAnswersBusyAndCloses() throws {
        let pair = Self.busyPair()
        pair.heard(.c)
        let rLink = try #require(pair.frames(.r).first?.link)
        let cLink = try #require(pair.lastAttempt(.c))
        #expect(pair.radio(.r) == [.send(Self.frame(.busy(retryAfterMilliseconds: 5_000)), on: rLink), .disconnect(rLink)])
        #expect(pair.radio(.c).last == .disconnect(cLink))
        #expect(pair.uwbRequests.c.isEmpty && pair.uwbRequests.r.isEmpty)
        #expect(pair.link(.c) == nil)
        // Neither side may range before the retry time (the old test read both reports'
        // `available`): C comes back no sooner, whatever it hears.
        let mark = pair.mark
        pair.run(4_900, adverts: true)
        #expect(pair.connects(since: mark).isEmpty)
    }

    @Test func theInitiatorWaitsForRetryAfter() {
        let pair = Self.busyPair()
        pair.heard(.c)
        let mark = pair.mark
        pair.run(6_000, adverts: true)
        // R's scheduler hands the decoy's session to C after the decoy's turn, at the same time.
        #expect(pair.connects(since: mark) == [Pair.start + 5_000])
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// A peer whose adverts became close after the `busy` is tried again at once, not after
    /// retryAfter. (R, which hears C's strong adverts too, has given C its session by then: the
    /// scheduler ranks a close peer above a far one.)
    @Test func aPeerThatCameCloseIsTriedAgainSooner() {
        let pair = Self.busyPair()
        pair.heard(.c)  // at -80 dBm: far
        #expect(pair.sent(.r, .busy).map(\.message) == [.busy(retryAfterMilliseconds: 5_000)])
        pair.advertRSSI = .init(both: -50)
        let mark = pair.mark
        pair.run(2_000, adverts: true)
        // The smoothed RSSI crosses closeRSSI at the second strong advert (-72.5, then -66.9).
        #expect(pair.connects(since: mark) == [Pair.start + 200])
        #expect(pair.sent(.r, .busy, since: mark).isEmpty)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// A peer that is already close when `busy` arrives waits at most 1 s, whatever `busy` said.
    @Test func aClosePeerWaitsAtMostOneSecond() throws {
        let pair = Self.busyPair(controllerToo: true)
        pair.advertRSSI.c = -50
        for _ in 0..<5 { pair.heard(.c) }  // close, but C's session is the decoy's
        #expect(pair.connects().isEmpty)
        pair.tick([.c])  // the scheduler gives R, the closer, C's session
        let busyAt = pair.now
        #expect(pair.connects() == [busyAt])
        #expect(pair.sent(.r, .busy).map(\.message) == [.busy(retryAfterMilliseconds: 5_000)])
        pair.advertRSSI.r = -50  // R hears C as close, and gives it its session
        let mark = pair.mark
        pair.run(3_000, adverts: true)
        #expect(pair.connects(since: mark) == [busyAt + 1_000])
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    @Test func aResponderThatFindsTheInitiatorCloseSaysComeBackWithinASecond() {
        let pair = Self.busyPair()
        for _ in 0..<3 { pair.heard(.r, rssi: -60) }
        pair.heard(.c)
        #expect(pair.sent(.r).map(\.message) == [.busy(retryAfterMilliseconds: 1_000)])
    }

    // MARK: Revocation

    @Test func aRevokedResponderSaysBusyAndCloses() throws {
        let pair = Pair(config: .init(c: .init(), r: Self.oneSession()))
        pair.heard(.c)
        let (cLink, rLink) = (try #require(pair.link(.c)), try #require(pair.link(.r)))
        pair.addDecoy(id: Self.decoy, heardBy: .r)  // waits for R's session
        let mark = pair.mark
        pair.run(5_000, adverts: true)
        // After C's turn R's scheduler takes its session back for the decoy.
        let revokedAt = try #require(pair.sent(.r, .busy).first?.at)
        #expect(revokedAt == Pair.start + 5_000)
        #expect(pair.radio(.r, since: mark) == [.send(Self.frame(.busy(retryAfterMilliseconds: 5_000)), on: rLink), .disconnect(rLink), .closeUWB(Pair.id(.c))])
        #expect(pair.radio(.c, since: mark) == [.disconnect(cLink), .closeUWB(Pair.id(.r))])
        // C waits out the busy (it is far); R gives it the session back after the decoy's turn.
        let retryMark = pair.mark
        pair.run(6_000, adverts: true)
        #expect(pair.connects(since: retryMark) == [revokedAt + 5_000])
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    @Test func aRevokedInitiatorClosesAndWaits() throws {
        let pair = Pair(config: .init(c: Self.oneSession(), r: .init()))
        pair.heard(.c)
        let cLink = try #require(pair.link(.c))
        _ = try #require(pair.link(.r))
        let decoy = pair.addDecoy(id: Self.decoy, heardBy: .c)
        let mark = pair.mark
        pair.run(5_000, adverts: true)
        let revoked = try #require(pair.records[mark...].first { $0.side == .c && $0.effect == .disconnect(cLink) })
        #expect(revoked.at == Pair.start + 5_000)
        let atRevocation = pair.records[mark...].filter { $0.side == .c && $0.at == revoked.at }.map(\.effect)
        #expect(
            atRevocation == [
                .emit([Event(node: Pair.id(.c).description, body: .rough(.init(peer: Pair.id(.r).description, rssi: -80, band: .far)))]),
                .disconnect(cLink), .closeUWB(Pair.id(.r)), .connect(decoy.address, for: decoy.id),
            ])
        #expect(pair.radio(.r, since: mark) == [.closeUWB(Pair.id(.c))])
        #expect(pair.sent(.c, since: mark).isEmpty)  // the initiator simply closes
        let retryMark = pair.mark
        pair.run(6_000, adverts: true)
        #expect(pair.connects(since: retryMark) == [revoked.at + 5_000])
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    // MARK: End of the relationship

    @Test(arguments: Side.allCases) func goodbyeEndsThePeer(side: Side) throws {
        let pair = Pair.ranging()
        let (link, otherLink) = (try #require(pair.link(side)), try #require(pair.link(side.other)))
        let mark = pair.mark
        #expect(pair.feed(side, .stop).radio == [.send(Self.frame(.goodbye), on: link), .disconnect(link), .closeUWB(Pair.id(side.other))])
        #expect(pair.lost(side.other, since: mark) == [.init(peer: Pair.id(side).description, reason: .peerEnded)])
        #expect(pair.radio(side.other, since: mark) == [.disconnect(otherLink), .closeUWB(Pair.id(side))])
    }

    @Test(arguments: Side.allCases) func silenceLongerThanThePeerTimeoutIsReported(side: Side) {
        let timeout = BridgeConfig().peerTimeoutMilliseconds
        let lost = [Event.PeerLost(peer: Pair.id(side.other).description, reason: .timeout)]
        let pair = Pair.ranging()
        pair.advance(timeout)
        pair.tick([side])
        #expect(pair.lost(side).isEmpty)
        pair.advance(1)
        pair.tick([side])
        #expect(pair.lost(side) == lost)  // last heard at the start
        // An advert is a sign of life too.
        let heard = Pair.ranging()
        heard.advance(3_000)
        heard.heard(side)
        heard.advance(timeout)
        heard.tick([side])
        #expect(heard.lost(side).isEmpty)
        heard.advance(1)
        heard.tick([side])
        #expect(heard.lost(side) == lost)
    }

    @Test(arguments: Side.allCases) func rangesKeepASilentPeerAlive(side: Side) {
        let timeout = BridgeConfig().peerTimeoutMilliseconds
        let pair = Pair.ranging()
        pair.advance(5_000)
        pair.ranges(side, centimetres: [150])
        pair.advance(timeout)
        pair.tick([side])
        #expect(pair.lost(side).isEmpty)
        pair.advance(1)
        pair.tick([side])
        #expect(pair.lost(side) == [.init(peer: Pair.id(side.other).description, reason: .timeout)])
    }
}
