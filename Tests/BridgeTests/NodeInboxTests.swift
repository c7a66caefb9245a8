import Testing
import UCI
import UCIHost

@testable import Bridge

@Suite struct NodeInboxTests {
    func round(_ sequence: UInt32) -> NodeInput {
        .uwb(.notification(.rangeData(RangeData(sequenceNumber: sequence, session: 1, rangingIntervalMilliseconds: 100, measurements: []))))
    }

    func sequence(of input: NodeInput) -> UInt32? {
        if case .uwb(.notification(.rangeData(let data))) = input { data.sequenceNumber } else { nil }
    }

    @Test func theLoopTakesEverythingWaitingInOrder() async {
        let inbox = NodeInbox(tracker: nil, limit: 100)
        inbox.post((1...3).map(round))
        inbox.post(.tick)
        inbox.post(round(4))
        let batch = await inbox.next() ?? []
        #expect(batch.map(sequence) == [1, 2, 3, nil, 4])
        inbox.handled(batch)
        inbox.finish()
        #expect(await inbox.next() == nil)
    }

    @Test func pastTheLimitRoundsAreDroppedAndCountedButTicksQueue() async {
        let inbox = NodeInbox(tracker: nil, limit: 3)
        inbox.post((1...5).map(round))
        inbox.post(.tick)
        let batch = await inbox.next() ?? []
        #expect(batch.map(sequence) == [1, 2, 3, nil])
        #expect(inbox.takeDropped() == 2)
        // Taken but not yet handled still counts: the node has not caught up.
        inbox.post(round(6))
        #expect(inbox.takeDropped() == 1)
        inbox.handled(batch)
        inbox.post(round(7))
        #expect(await inbox.next()?.map(sequence) == [7])
    }

    @Test func aWaitingLoopWakesForABatch() async {
        let inbox = NodeInbox(tracker: nil, limit: 100)
        async let batch = inbox.next()
        try? await Task.sleep(for: .milliseconds(20))
        inbox.post((1...2).map(round))
        #expect(await batch?.map(sequence) == [1, 2])
    }
}
