import PeerProtocol
import Testing

@testable import Bridge

/// A batch sorted out by peer keeps the order the node's events depend on: peers by their
/// first reading, each peer's readings in arrival order.
struct RangeBatchTests {
    private let a = PeerID(0xA), b = PeerID(0xB), c = PeerID(0xC)

    private func rounds(_ batch: RangeBatch, _ slot: Int) -> [Int] {
        batch.readings(ofPeerAt: slot).map(\.round)
    }

    @Test func interleavedReadingsGroupByPeerInArrivalOrder() {
        var batch = RangeBatch()
        for (round, peer) in [a, b, a, c, b, a].enumerated() { batch.add(.init(round: round, measurement: 0), of: peer) }
        batch.sort()
        #expect(batch.peers == [a, b, c])
        #expect(batch.count == 6)
        #expect(rounds(batch, 0) == [0, 2, 5])
        #expect(rounds(batch, 1) == [1, 4])
        #expect(rounds(batch, 2) == [3])
    }

    @Test func aBatchAfterRemoveAllKnowsNothingOfTheOneBefore() {
        var batch = RangeBatch()
        for (round, peer) in [a, b, c, c].enumerated() { batch.add(.init(round: round, measurement: 0), of: peer) }
        batch.sort()
        batch.removeAll()
        batch.add(.init(round: 0, measurement: 1), of: c)
        batch.add(.init(round: 0, measurement: 2), of: a)
        batch.add(.init(round: 1, measurement: 0), of: c)
        batch.sort()
        #expect(batch.peers == [c, a])
        #expect(batch.readings(ofPeerAt: 0).map(\.measurement) == [1, 0])
        #expect(rounds(batch, 0) == [0, 1])
        #expect(batch.readings(ofPeerAt: 1).map(\.measurement) == [2])
    }

    @Test func anEmptyBatchHasNoPeers() {
        var batch = RangeBatch()
        batch.sort()
        #expect(batch.peers.isEmpty)
        #expect(batch.count == 0)
    }
}
