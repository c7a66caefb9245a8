import StreamIO
import Testing

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
