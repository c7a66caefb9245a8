import StreamIO
import Synchronization
import Testing

/// Who got through, in order.
private final class Passed: Sendable {
    private let entries = Mutex<[Int]>([])
    func add(_ entry: Int) { entries.withLock { $0.append(entry) } }
    var all: [Int] { entries.withLock { $0 } }
}

@Suite(.timeLimit(.minutes(1))) struct WaiterListTests {
    /// Waiters wait until the condition holds, then all go together.
    @Test func waitersGoTogetherWhenTheConditionComesTrue() async {
        let outstanding = WaiterList(2) { $0 == 0 }
        let released = Passed()
        var waiters: [Task<Void, Never>] = []
        for i in 0..<3 {
            waiters.append(
                Task {
                    await outstanding.wait()
                    released.add(i)
                })
        }
        while outstanding.waiting < 3 { await Task.yield() }
        outstanding.update { $0 -= 1 }
        #expect(released.all.isEmpty)
        outstanding.update { $0 -= 1 }
        for waiter in waiters { await waiter.value }
        #expect(released.all.sorted() == [0, 1, 2])
        await outstanding.wait()  // holds: at once
    }

    /// A slot claimed on the way out passes to one waiter at a time, first come first served.
    @Test func aClaimedSlotPassesToOneWaiterAtATimeInOrder() async {
        let busy = WaiterList(true) { !$0 }
        let order = Passed()
        var waiters: [Task<Void, Never>] = []
        for i in 0..<3 {
            waiters.append(
                Task {
                    await busy.wait { $0 = true }
                    order.add(i)
                })
            while busy.waiting < i + 1 { await Task.yield() }
        }
        for expected in 0..<3 {
            busy.update { $0 = false }
            await waiters[expected].value
            #expect(order.all == Array(0...expected))
            #expect(busy.waiting == 2 - expected)  // the others still wait: the slot is taken
        }
    }
}

@Suite struct ReplySlotTests {
    @Test func theFirstResultWinsBeforeOrAfterTheWaiterComes() async {
        let early = ReplySlot<Int, Never>()
        #expect(early.resume(with: .success(1)))
        #expect(!early.resume(with: .success(2)))
        #expect(await early.result.get() == 1)

        let late = ReplySlot<Int, Never>()
        let waiter = Task { await late.result.get() }
        await Task.yield()
        #expect(late.resume(with: .success(3)))
        #expect(!late.resume(with: .success(4)))
        #expect(await waiter.value == 3)
    }
}
