import BLE
@testable import Bridge
import Testing

// Issue 35: connections opened to a rig that never say `hello` (silent, keyless, a replayed
// handshake) are bounded in number and time, and an honest peer still gets in.
@Suite struct NodeCoreFloodTests {
    typealias Pair = CorePair
    /// At most 128 links wait for their hello (as many as strangers may open at once).
    static let limit = 128
    static var config: BridgeConfig {
        var config = BridgeConfig()
        config.rangingSessions = 2
        return config
    }

    /// `count` links opened to R by an attacker's adapter, none of which ever sends anything.
    @discardableResult
    static func flood(_ pair: Pair, count: Int, from first: LinkID = 10_000) -> [LinkID] {
        (0..<count).map { index in
            let link = first + LinkID(index)
            pair.feed(.r, .ble(.linkOpened(link, peer: BLEAddress(bytes: [0x0F, 0x10, 0x0D, 0, UInt8(index >> 8), UInt8(index & 0xFF)]), initiatedLocally: false)))
            return link
        }
    }

    /// Two hundred silent links at once: R takes 128 (what it takes from strangers at once) and
    /// closes the rest before any handshake; all 128 may wait. A second
    /// later C's honest link opens, gets its hello through and ranges, taking the place of the
    /// oldest silent link still waiting; once the hello timeout has passed the silent ones left
    /// are closed too, the honest one is not. A second flood then leaves no room for strangers,
    /// yet C, proven, gets in again at once. Before issue 35 every one of those links stayed open
    /// for as long as the attacker liked, and each could make R compute a handshake.
    @Test func silentLinksAreRateLimitedCappedAndTimedOutAndAnHonestPeerStillGetsIn() {
        let pair = Pair(config: .init(both: Self.config), secure: true)
        let links = Self.flood(pair, count: 200)
        let admitted = NodeCore.strangersAdmittedAtOnce
        #expect(Set(pair.disconnects(.r)) == Set(links.prefix(admitted - Self.limit) + links.suffix(200 - admitted)))
        pair.advance(1_000)
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        let honest = pair.link(.r)
        #expect(pair.disconnects(.r).last == links[admitted - Self.limit])
        let mark = pair.mark
        pair.advance(NodeCore.helloTimeoutMilliseconds)
        pair.tick([.r])
        #expect(Set(pair.disconnects(.r, since: mark)) == Set(links[(admitted - Self.limit + 1)..<admitted]))
        #expect(!pair.disconnects(.r, since: mark).contains { $0 == honest })
        #expect(pair.isRanging(.c) && pair.isRanging(.r))

        Self.flood(pair, count: 200, from: 20_000)
        pair.breakLink()
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// The address of a link pushed out at the limit is backed off like one whose link went
    /// without its hello: the flooder's next link from it is closed at once and takes no
    /// admission, so it pushes out no other waiting link. (Before, it was admitted again while
    /// admissions lasted, and each such link pushed out the next oldest.)
    @Test func theAddressOfALinkPushedOutAtTheLimitIsBackedOff() {
        let pair = Pair(config: .init(both: Self.config))
        let links = Self.flood(pair, count: Self.limit)
        #expect(pair.disconnects(.r) == [])
        pair.advance(1_000)
        let newcomer = 20_000 as LinkID
        pair.feed(.r, .ble(.linkOpened(newcomer, peer: BLEAddress(bytes: [0x0F, 0x10, 0x0E, 0, 0, 0]), initiatedLocally: false)))
        #expect(pair.disconnects(.r) == [links[0]], "the oldest waiting link makes room")
        let mark = pair.mark
        let again = 30_000 as LinkID
        pair.feed(.r, .ble(.linkOpened(again, peer: BLEAddress(bytes: [0x0F, 0x10, 0x0D, 0, 0, 0]), initiatedLocally: false)))
        #expect(pair.disconnects(.r, since: mark) == [again], "the pushed-out address is backed off: its new link goes, no waiting link does")
        #expect(!pair.disconnects(.r).contains(links[1]) && !pair.disconnects(.r).contains(newcomer))
    }

    /// A link that says nothing is closed once the hello timeout has passed, not before.
    @Test func aLinkWithoutHelloIsClosedAfterTheHelloTimeout() {
        let pair = Pair(config: .init(both: Self.config))
        let link = Self.flood(pair, count: 1)[0]
        pair.advance(NodeCore.helloTimeoutMilliseconds - 1)
        pair.tick([.r])
        #expect(pair.disconnects(.r) == [])
        pair.advance(1)
        pair.tick([.r])
        #expect(pair.disconnects(.r) == [link])
    }
}
