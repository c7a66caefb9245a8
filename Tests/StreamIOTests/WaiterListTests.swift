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
        while outstanding.waiting < 3 { try? await Task.sleep(for: .milliseconds(1)) }
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
            while busy.waiting < i + 1 { try? await Task.sleep(for: .milliseconds(1)) }
        }
        for expected in 0..<3 {
            busy.update { $0 = false }
            await waiters[expected].value
            #expect(order.all == Array(0...expected))
            #expect(busy.waiting == 2 - expected)  // the others still wait: the slot is taken
        }
    }

    /// What a waiter claims is its own: each of two consumers takes one batch, in order.
    @Test func aClaimHandsTheWaiterWhatItTook() async {
        let queue = WaiterList([Int]()) { !$0.isEmpty }
        let first = Task { await queue.wait { items in defer { items = [] }; return items } }
        while queue.waiting < 1 { try? await Task.sleep(for: .milliseconds(1)) }
        let second = Task { await queue.wait { items in defer { items = [] }; return items } }
        while queue.waiting < 2 { try? await Task.sleep(for: .milliseconds(1)) }
        queue.update { $0 = [1, 2] }
        #expect(await first.value == [1, 2])
        #expect(queue.waiting == 1)
        queue.update { $0 = [3] }
        #expect(await second.value == [3])
    }
}
