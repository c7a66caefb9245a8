import PeerProtocol
import Testing

@testable import Bridge

@Suite struct RangingSchedulerTests {
    let scheduler = RangingScheduler(budget: 2)

    func candidate(_ id: UInt64, granted: Bool = false, since: Int64 = 0, priority: Bool = false, rssi: Double? = -80, available: Bool = true)
        -> RangingScheduler.Candidate
    {
        .init(peer: PeerID(id), granted: granted, since: since, holdsPriority: priority, rssi: rssi, available: available)
    }

    @Test func withinBudgetEveryAvailablePeerRanges() {
        #expect(scheduler.choose([candidate(1), candidate(2)], now: 0) == [PeerID(1), PeerID(2)])
        #expect(scheduler.choose([candidate(1), candidate(2, available: false), candidate(3)], now: 0) == [PeerID(1), PeerID(3)])
    }

    /// A full air sheds the third tier even within budget, granted or not; near and strong peers stay.
    @Test func aFullAirShedsPeersThatAreNeitherNearNorStrong() {
        var full = RangingScheduler(budget: 8)
        full.shedsFarPeers = true
        let peers = [
            candidate(1, granted: true, rssi: -80), candidate(2, rssi: -85), candidate(3, priority: true, rssi: -90),
            candidate(4, rssi: -60), candidate(5, rssi: nil),
        ]
        #expect(full.choose(peers, now: 0) == [PeerID(3), PeerID(4)])
        #expect(RangingScheduler(budget: 8).choose(peers, now: 0).count == 5)
    }

    @Test func aPeerKeepsItsTurnThenTheLongestWaitingGoesNext() {
        let peers = [candidate(1, granted: true, since: 0), candidate(2, granted: true, since: 0), candidate(3, since: -5_000), candidate(4, since: -1_000)]
        #expect(scheduler.choose(peers, now: 4_999) == [PeerID(1), PeerID(2)])
        #expect(scheduler.choose(peers, now: 5_000) == [PeerID(3), PeerID(4)])
    }

    @Test func nearPeersKeepPriorityAndCloseOnesJumpTheQueue() {
        let peers = [
            candidate(1, granted: true, since: 0, priority: true), candidate(2, granted: true, since: 0),
            candidate(3, since: -60_000), candidate(4, since: 0, rssi: -60),
        ]
        // Peer 2 is still in its turn, but peer 4's strong signal puts it in a higher tier.
        #expect(scheduler.choose(peers, now: 1_000) == [PeerID(1), PeerID(4)])
        // Long after its turn, the near peer still holds its session.
        #expect(scheduler.choose(peers, now: 600_000).contains(PeerID(1)))
    }

    @Test func rotationIsFairOverManyTurns() {
        // Eight peers, two sessions, a decision every second: everyone gets turns, evenly.
        var granted: [UInt64: Int64] = [:]
        var waitingSince: [UInt64: Int64] = Dictionary(uniqueKeysWithValues: (1...8).map { ($0, 0) })
        var turns: [UInt64: Int] = [:]
        for now in stride(from: Int64(0), through: 200_000, by: 1_000) {
            let peers = (1...8).map { id in
                candidate(id, granted: granted[id] != nil, since: granted[id] ?? waitingSince[id]!)
            }
            let chosen = Set(scheduler.choose(peers, now: now).map(\.rawValue))
            for id in granted.keys where !chosen.contains(id) {
                granted[id] = nil
                waitingSince[id] = now
            }
            for id in chosen where granted[id] == nil {
                granted[id] = now
                turns[id, default: 0] += 1
            }
        }
        #expect(turns.count == 8)
        #expect(turns.values.max()! - turns.values.min()! <= 1)
    }

    @Test func peersSharingOneToManySessionsCountAsAFractionOfOne() {
        var sharing = RangingScheduler(budget: 2)
        sharing.controleesPerSession = 4
        // Peer 1 needs a session of its own; 2 to 6 would share: 1 + ceil(5 / 4) = 3 sessions, one
        // too many. In rank order (here by id), 6 is the one left out.
        var peers = (1...6).map { candidate(UInt64($0)) }
        for index in 1..<6 { peers[index].sharesSession = true }
        #expect(sharing.choose(peers, now: 0) == Set((1...5).map { PeerID(UInt64($0)) }))
        #expect(sharing.sessionsNeeded(.init(peers[0..<5])) == 2)
        // One controlee per session: the budget's two peers.
        #expect(scheduler.choose(peers, now: 0) == [PeerID(1), PeerID(2)])
    }

    @Test func aHalfEmptySharedSessionStillTakesAWholeSession() {
        var sharing = RangingScheduler(budget: 2)
        sharing.controleesPerSession = 4
        // Peers 2 and 3 are left alone in two one-to-many sessions (their partners went away): the
        // radio runs two sessions, so peer 1, who needs one of its own, must wait, although two
        // sharing peers would fit in one session.
        var peers = [candidate(1), candidate(2, granted: true), candidate(3, granted: true)]
        peers[1].sharesSession = true
        peers[1].sharedSession = 0xA
        peers[2].sharesSession = true
        peers[2].sharedSession = 0xB
        #expect(sharing.sessionsNeeded(.init(peers)) == 3)
        #expect(sharing.choose(peers, now: 0) == [PeerID(2), PeerID(3)])
        // A sharing peer without a place yet takes a free place in one of them: no new session.
        var newcomer = candidate(4)
        newcomer.sharesSession = true
        #expect(sharing.sessionsNeeded(.init(peers[1...] + [newcomer])) == 2)
        #expect(sharing.choose(peers[1...] + [newcomer], now: 0) == [PeerID(2), PeerID(3), PeerID(4)])
    }

    @Test func busyPeersAreToldToWaitForTheQueueWithinLimits() {
        #expect(scheduler.retryAfter(waiting: 0) == 1_000)
        #expect(scheduler.retryAfter(waiting: 4) == 10_000)
        #expect(scheduler.retryAfter(waiting: 1_000) == 30_000)
    }

    @Test func roughBandsFollowTheSignalWithHysteresis() {
        var rough = RoughProximity()
        let first = rough.add(-80)
        #expect(first && rough.band == .far)
        let again = rough.add(-80)
        #expect(!again)
        // Smoothed towards -70: medium once past -72 (the edge plus the hysteresis).
        var changes = 0
        for _ in 0..<20 where rough.add(-70) { changes += 1 }
        #expect(changes == 1 && rough.band == .medium)
        // Back to -77: inside the hysteresis, still medium.
        for _ in 0..<20 { _ = rough.add(-77) }
        #expect(rough.band == .medium)
    }
}
