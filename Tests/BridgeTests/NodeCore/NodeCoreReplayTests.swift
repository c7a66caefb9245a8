import BLE
@testable import Bridge
import Events
import PeerProtocol
import PeerSecurity
import Testing

// Issue 35: a keyless node that replays a peer's captured private advert from its own address.
// The advert opens with the event key like the real one; only a link that opens (the v2
// handshake) tells the two addresses apart.
@Suite struct NodeCoreReplayTests {
    typealias Pair = CorePair
    static let connectTimeout = BridgeConfig().connectTimeoutMilliseconds
    /// The replayer's own address: it never completes a connection.
    static let replayer = BLEAddress(bytes: [0x0B, 0xAD, 0, 0, 0, 0xEE])

    /// R's advert, byte for byte, heard by C from the replayer.
    static func replay(_ pair: Pair) {
        pair.feed(.c, .ble(.advertisement(replayer, rssi: -60, data: pair.advertisingData(of: .r))))
    }

    static func connects(_ pair: Pair, to address: BLEAddress, since mark: Int = 0) -> Int {
        pair.radio(.c, since: mark).count { if case .connect(address, _) = $0 { true } else { false } }
    }

    /// Heard first, the replay takes C's first attempt (nothing tells the two apart yet). Once
    /// that attempt times out, the replayer is not tried again while R is heard, even though its
    /// copy is the last advert C heard: C reaches R. Before issue 35 C connected to whichever
    /// address it heard last, and a replayer heard last every time stopped every bump.
    @Test func aReplayerCostsOneAttemptThenThePeersOwnAddressIsUsed() {
        let pair = Pair(secure: true)
        Self.replay(pair)
        #expect(Self.connects(pair, to: Self.replayer) == 1)
        pair.advance(Self.connectTimeout - 1)
        pair.heard(.c)  // R's own advert, while that attempt hangs
        pair.advance(1)
        pair.tick([.c])
        #expect(!pair.isRanging(.c))
        Self.replay(pair)  // the replayer is heard last again
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        #expect(Self.connects(pair, to: Self.replayer) == 1)
    }

    /// With address binding (R's advert says it comes only from addresses R's identity resolving
    /// key makes), a copy heard from the replayer is not R at all: no connection, no peer. From
    /// R's own address it is R; an advert without the bit is taken from anywhere, as before.
    @Test func aBoundAdvertIsThePeerOnlyFromAnAddressItsKeyResolves() {
        let pair = Pair(secure: true)
        let advert = Advertisement(
            group: Pair.group, peerID: Pair.id(.r), uwbShortAddress: Pair.uwbAddress(.r), capabilities: [.uwb, .oneToMany, .addressBound],
            psm: 0x85)
        let bound = PrivateAdvert(key: Pair.eventKey).advertisingData(for: advert, nonce: [1, 2, 3, 4, 5])
        // An address made with another rig's key is no better than the replayer's.
        let others = ResolvablePrivateAddress.address(irk: KeySchedule.identityResolvingKey(Pair.eventKey, peer: Pair.id(.c)), prand: 0x45_6789)
        for address in [Self.replayer, others] {
            pair.feed(.c, .ble(.advertisement(address, rssi: -40, data: bound)))
            #expect(Self.connects(pair, to: address) == 0)
        }
        #expect(pair.found(.c).isEmpty)
        let own = ResolvablePrivateAddress.address(irk: KeySchedule.identityResolvingKey(Pair.eventKey, peer: Pair.id(.r)), prand: 0x45_6789)
        pair.feed(.c, .ble(.advertisement(own, rssi: -60, data: bound)))
        #expect(pair.found(.c).count == 1)
        #expect(Self.connects(pair, to: own) == 1)
    }

    /// An address a link proved stays first: after the link breaks, C goes back to it however
    /// often the replayer is heard, and first.
    @Test func aProvenAddressIsNeverDisplacedByAReplay() {
        let pair = Pair(secure: true)
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        for _ in 0..<3 {
            pair.breakLink()
            pair.advance(100)
            let mark = pair.mark
            Self.replay(pair)
            #expect(Self.connects(pair, to: Self.replayer, since: mark) == 0)
            #expect(pair.connects(since: mark) == [pair.now])
            #expect(pair.isRanging(.c) && pair.isRanging(.r))
        }
    }

    /// A peer's own address is still tried when it alone is heard, however often it failed: the
    /// order only matters between addresses.
    @Test func aLoneAddressIsTriedAgainAfterEveryFailure() {
        let pair = Pair(secure: true)
        pair.connectOutcome = .hangs
        for attempt in 1...3 {
            let mark = pair.mark
            pair.heard(.c)
            #expect(pair.connects(since: mark).count == 1, "attempt \(attempt)")
            pair.advance(Self.connectTimeout)
            pair.tick([.c])
        }
        pair.connectOutcome = .opens
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// A flood of replays from ever new addresses keeps at most `PeerAddresses.capacity`
    /// addresses per peer, and the proven one among them.
    @Test func replaysFromManyAddressesKeepTheProvenOneAndNoMore() {
        var addresses = PeerAddresses()
        let own = Pair.bleAddress(.r)
        addresses.heard(own, rssi: -70, at: 0)
        addresses.proved(own)
        for index in 1...1_000 {
            addresses.heard(BLEAddress(bytes: [UInt8(index & 0xFF), UInt8(index >> 8), 0, 0, 0xBA, 0xD0]), rssi: -70, at: Int64(index))
        }
        #expect(addresses.entries.count == PeerAddresses.capacity)
        #expect(addresses.entries[own] != nil)
        #expect(addresses.best(at: 1_000, window: 6_000) == own)
        // Not heard within the window, the proven address is not where to connect.
        #expect(addresses.best(at: 7_000, window: 6_000) != own)
    }

    /// A peer with LE privacy changes its address; the old one falls silent for good. Three of the
    /// peer's advert intervals after that, with the new one heard, the proven old address is not
    /// where to connect (a kernel would wait for it until we give up), while a replayer's faster
    /// adverts never pass over the proven address between two of the peer's own.
    @Test func anAddressThePeerRotatedAwayFromIsNotTriedButItsOwnPaceIsKept() {
        let old = BLEAddress(bytes: [1, 0, 0, 0, 0, 0x4A])
        let new = BLEAddress(bytes: [2, 0, 0, 0, 0, 0x4B])
        var rotated = PeerAddresses()
        for t in stride(from: Int64(0), through: 10_000, by: 250) { rotated.heard(old, rssi: -60, at: t) }
        rotated.proved(old)
        rotated.heard(new, rssi: -60, at: 10_250)
        #expect(rotated.best(at: 10_250, window: 6_000) == old, "silent for one interval only")
        for t in stride(from: Int64(10_500), through: 11_000, by: 250) { rotated.heard(new, rssi: -60, at: t) }
        #expect(rotated.best(at: 11_000, window: 6_000) == new)

        let replayer = BLEAddress(bytes: [3, 0, 0, 0, 0xBA, 0xD0])
        var replayed = PeerAddresses()
        for t in stride(from: Int64(0), through: 5_000, by: 1_000) { replayed.heard(old, rssi: -60, at: t) }
        replayed.proved(old)
        for t in stride(from: Int64(5_010), through: 5_990, by: 10) { replayed.heard(replayer, rssi: -50, at: t) }
        #expect(replayed.best(at: 5_990, window: 6_000) == old)
    }
}
