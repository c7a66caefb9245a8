import BLE
@testable import Bridge
import PeerSecurity
import Testing

// Issue 35, item 2: a node without the event key that follows the protocol as far as it can
// fails the handshake. Its address is then backed off, for longer at each failure in a row, in
// both directions: links it opens to a rig are closed before any handshake work, and a rig that
// connects to it (it replays a real peer's advert) does not come back at once. Before, a rig took
// every new link from it (within the strangers' rate it shares with honest peers) and connected to
// it again at every advert it heard.
@Suite struct NodeCoreBackOffTests {
    typealias Pair = CorePair
    /// The keyless node's address.
    static let keyless = BLEAddress(bytes: [0x0E, 0x55, 0, 0, 0, 0x01])
    static let first = HandshakeAdmission.firstBackOffMilliseconds

    /// The first message of a handshake under a key that is not the event's: what a keyless node
    /// running the bridge sends.
    static func outsidersInitiation() throws -> [UInt8] {
        let outsider = try GroupKey(bytes: [UInt8](repeating: 7, count: 32))
        var handshake = NoiseHandshake(role: .initiator, psk: KeySchedule.handshakePSK(outsider), ephemeral: .init())
        return SecureFrame.handshakeInitiation(handshake.writeInitiation()).encoded()
    }

    /// The keyless node opens `link` to R and sends its handshake; returns whether R closed the
    /// link at once, before reading anything (true), or only after the handshake failed.
    static func attempt(_ pair: Pair, link: LinkID) throws -> Bool {
        let opened = pair.feed(.r, .ble(.linkOpened(link, peer: keyless, initiatedLocally: false)))
        if opened.contains(.disconnect(link)) { return true }
        let answered = pair.feed(.r, .ble(.linkData(link, try outsidersInitiation())))
        #expect(answered.contains(.disconnect(link)), "R refuses the outsider's handshake")
        return false
    }

    /// Incoming: after a failed handshake the address's next links are closed at once for 1 s,
    /// then 2 s after the next failure, then 4 s; an honest peer meanwhile gets in.
    @Test func aKeylessInitiatorIsBackedOffLongerAtEachFailure() throws {
        let pair = Pair(secure: true)
        var link: LinkID = 9_000
        func next() -> LinkID { link += 1; return link }
        for (failure, backOff) in [Self.first, 2 * Self.first, 4 * Self.first].enumerated() {
            #expect(try !Self.attempt(pair, link: next()), "failure \(failure + 1) is read")
            #expect(try Self.attempt(pair, link: next()), "closed at once after failure \(failure + 1)")
            pair.advance(backOff - 1)
            #expect(try Self.attempt(pair, link: next()), "still closed at once \(backOff - 1) ms after failure \(failure + 1)")
            pair.advance(1)
        }
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        #expect(pair.found(.r).map(\.peer) == [Pair.id(.c).description], "no event about the keyless node")
    }

    /// A link that says nothing until the hello timeout counts as a failure too; a link that
    /// completes its handshake and hello clears its address's back-off.
    @Test func aSilentLinkBacksItsAddressOffAndAProvenOneIsClear() {
        var admission = HandshakeAdmission(perSecond: 64, burst: 128, now: 0)
        #expect(admission.admit(Self.keyless, now: 0) == .admitted)
        #expect(admission.failed(Self.keyless, now: 5_000) == Self.first)
        #expect(admission.admit(Self.keyless, now: 5_999) == .backedOff)
        #expect(admission.failed(Self.keyless, now: 6_000) == 2 * Self.first)
        admission.trust(Self.keyless, now: 6_100)
        #expect(admission.admit(Self.keyless, now: 6_200) == .admitted)
        #expect(admission.failed(Self.keyless, now: 6_300) == Self.first, "a proven address starts again from the first back-off")
    }

    /// Back-offs grow to 64 s and no further, and are forgiven after ten quiet minutes.
    @Test func backOffsStopGrowingAndAreForgiven() {
        var admission = HandshakeAdmission(perSecond: 64, burst: 128, now: 0)
        var now: Int64 = 0
        var backOffs: [Int64] = []
        for _ in 0..<9 {
            let backOff = admission.failed(Self.keyless, now: now)
            backOffs.append(backOff)
            now += backOff
        }
        #expect(backOffs == [1, 2, 4, 8, 16, 32, 64, 64, 64].map { $0 * 1_000 })
        #expect(admission.failed(Self.keyless, now: now + HandshakeAdmission.forgivenAfterMilliseconds) == Self.first)
    }

    /// Outgoing: C connects to the address a replayed advert of R came from, and the keyless node
    /// there answers with a handshake it cannot make. C does not connect there again for 1 s,
    /// then 2 s after the next failure, however often the replay is heard; R's own address is
    /// not held back, and C reaches R at once when it hears R.
    @Test func aKeylessResponderIsNotConnectedToAgainAtOnce() {
        let pair = Pair(secure: true)
        func replay() { pair.feed(.c, .ble(.advertisement(Self.keyless, rssi: -60, data: pair.advertisingData(of: .r)))) }
        func connectsToKeyless(since mark: Int) -> Int {
            pair.radio(.c, since: mark).count { if case .connect(Self.keyless, _) = $0 { true } else { false } }
        }
        for backOff in [Self.first, 2 * Self.first] {
            let mark = pair.mark
            replay()
            #expect(connectsToKeyless(since: mark) == 1)
            guard let link = pair.lastAttempt(.c) else {
                Issue.record("no attempt")
                return
            }
            pair.feed(.c, .ble(.linkOpened(link, peer: Self.keyless, initiatedLocally: true)))
            let garbage = SecureFrame.handshakeResponse([UInt8](repeating: 0x5A, count: NoiseHandshake.messageSize)).encoded()
            #expect(pair.feed(.c, .ble(.linkData(link, garbage))).contains(.disconnect(link)))
            let refused = pair.mark
            for _ in 0..<Int(backOff / 100) - 1 {
                pair.advance(100)
                replay()
            }
            #expect(connectsToKeyless(since: refused) == 0, "held back for \(backOff) ms")
            pair.advance(100)
        }
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// Whoever accepts a link at a replayed advert's address and stays silent costs C the
    /// handshake timeout (2 s), not the connect timeout (10 s): then C gives the link up, backs the
    /// address off and reaches R at R's next advert.
    @Test func aSilentResponderCostsTheHandshakeTimeoutNotTheConnectTimeout() {
        let pair = Pair(secure: true)
        pair.feed(.c, .ble(.advertisement(Self.keyless, rssi: -60, data: pair.advertisingData(of: .r))))
        guard let link = pair.lastAttempt(.c) else {
            Issue.record("no attempt")
            return
        }
        pair.feed(.c, .ble(.linkOpened(link, peer: Self.keyless, initiatedLocally: true)))
        pair.advance(PeerMachine.handshakeTimeoutMilliseconds - 1)
        pair.tick([.c])
        #expect(!pair.radio(.c).contains(.disconnect(link)))
        pair.advance(1)
        pair.tick([.c])
        #expect(pair.radio(.c).contains(.disconnect(link)))
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// Between addresses that never failed, the one heard strongest is tried first: a peer comes
    /// close to bump, replayers standing farther off wait. Differences under 6 dB do not count.
    @Test func theAddressHeardStrongestIsTriedFirst() {
        var addresses = PeerAddresses()
        let (far, near) = (BLEAddress(bytes: [1, 0, 0, 0, 0, 0xC0]), BLEAddress(bytes: [2, 0, 0, 0, 0, 0xC0]))
        addresses.heard(far, rssi: -80, at: 0)
        addresses.heard(near, rssi: -79, at: 10)
        #expect(addresses.best(at: 10, window: 6_000) == far, "as strong: the one heard first")
        addresses.heard(near, rssi: -60, at: 20)
        #expect(addresses.best(at: 20, window: 6_000) == near)
    }

    /// In an open (v1) event a link proves nothing when it opens: whoever replays a v1 advert
    /// accepts it. So C gives up a link nobody answers on after the handshake timeout, backs the
    /// address off, and reaches R at R's next advert; R's address is proven by R's answer. Before,
    /// C took the opened link for R's and waited on it for as long as the replays went on.
    @Test func anOpenEventsSilentLinkIsGivenUpAfterTheHandshakeTimeout() {
        let pair = Pair()
        func replay() { pair.feed(.c, .ble(.advertisement(Self.keyless, rssi: -60, data: pair.advertisingData(of: .r)))) }
        replay()
        guard let link = pair.lastAttempt(.c) else {
            Issue.record("no attempt")
            return
        }
        pair.feed(.c, .ble(.linkOpened(link, peer: Self.keyless, initiatedLocally: true)))
        pair.advance(PeerMachine.handshakeTimeoutMilliseconds - 100)
        replay()
        pair.tick([.c])
        #expect(!pair.radio(.c).contains(.disconnect(link)))
        pair.advance(100)
        pair.tick([.c])
        #expect(pair.radio(.c).contains(.disconnect(link)))
        let mark = pair.mark
        replay()
        #expect(!pair.radio(.c, since: mark).contains { if case .connect(Self.keyless, _) = $0 { true } else { false } }, "backed off")
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }
}
