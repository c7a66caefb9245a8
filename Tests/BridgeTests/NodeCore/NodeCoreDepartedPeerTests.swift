import BLE
@testable import Bridge
import Events
import PeerProtocol
import PeerSecurity
import Testing

// Issue 34, item 3: a killed rig's kernel keeps advertising for it, and on an extended-advertising
// controller Linux re-enables the advert with its whole timeout every time a connection to it
// ends, so a peer that keeps connecting keeps the dead rig on the air (Tests/VMRig/README.md).
// Its channel is refused there (nobody listens on the PSM): the peer backs the address off, stops
// counting its adverts, reports the rig lost, and does not find it again from those adverts.
@Suite struct NodeCoreDepartedPeerTests {
    typealias Pair = CorePair
    static let peerTimeout = BridgeConfig().peerTimeoutMilliseconds

    /// C and R range; R is killed and its advert stays on the air. C hears that advert every
    /// 100 ms for a minute.
    static func killR(secure: Bool) -> (pair: Pair, killedAt: Int64, mark: Int) {
        let pair = Pair(secure: secure)
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        pair.breakLink()
        pair.connectOutcome = .refused
        let killedAt = pair.now
        let mark = pair.mark
        for _ in 0..<600 {
            pair.advance(100)
            pair.heard(.c)
            pair.tick([.c])
        }
        return (pair, killedAt, mark)
    }

    @Test(arguments: [false, true])
    func aKilledRigWhoseAdvertLingersIsLostOnceAndNotFoundAgain(secure: Bool) {
        let (pair, killedAt, mark) = Self.killR(secure: secure)
        let lost = pair.records[mark...].filter { record in
            guard record.side == .c, case .emit(let events) = record.effect else { return false }
            return events.contains { if case .peerLost = $0.body { true } else { false } }
        }
        #expect(lost.count == 1, "R lost once, not kept by its lingering advert")
        if let at = lost.first?.at { #expect(at - killedAt <= Self.peerTimeout + 1_000, "lost within the peer timeout") }
        #expect(pair.found(.c, since: mark).isEmpty, "the lingering advert finds nobody again")
        // Backed off, 1 s, 2 s, 4 s: a handful of attempts, not one at every advert.
        #expect(pair.connects(since: mark).count <= 4)
    }

    /// A bridge that starts again at that address has a new peer id (random per run): found at once.
    @Test func aRigStartedAgainAtThatAddressIsFoundAtOnce() {
        let (pair, _, _) = Self.killR(secure: false)
        let mark = pair.mark
        let restarted = Advertisement(
            group: Pair.group, peerID: PeerID(0x9999_0000_0000_0003), uwbShortAddress: 0x0D0E, capabilities: [.uwb], psm: 0x85)
        pair.feed(.c, .ble(.advertisement(Pair.bleAddress(.r), rssi: -50, data: restarted.advertisingData())))
        #expect(pair.found(.c, since: mark).map(\.peer) == [restarted.peerID.description])
    }

    /// A refusal where a replayed advert of R came from says nothing about R: R, heard at its own
    /// address, is ranged and not lost.
    @Test func aRefusalAtAReplayersAddressCostsTheRealPeerNothing() {
        let pair = Pair()
        let replayer = BLEAddress(bytes: [0x0E, 0x77, 0, 0, 0, 0x02])
        pair.connectOutcome = .refused
        pair.feed(.c, .ble(.advertisement(replayer, rssi: -40, data: pair.advertisingData(of: .r))))
        #expect(pair.radio(.c).contains { if case .connect(replayer, _) = $0 { true } else { false } })
        pair.connectOutcome = .opens
        let mark = pair.mark
        pair.run(20_000, adverts: true)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        #expect(pair.lost(.c, since: mark).isEmpty)
    }
}
