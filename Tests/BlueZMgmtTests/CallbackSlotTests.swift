import BLE
import Synchronization
import Testing

@Suite struct CallbackSlotTests {
    /// An event handler read out of a `Mutex` of the closure itself gains a thunk per call: by
    /// call n it runs n nested thunks (quadratic time, then a stack overflow). The slot must not.
    @Test func aHandlerCalledHalfAMillionTimesStaysFlat() {
        let slot = CallbackSlot<Int>()
        let total = Atomic<Int>(0)
        slot.install { total.add($0, ordering: .relaxed) }
        for _ in 0..<500_000 { slot(1) }
        #expect(total.load(ordering: .relaxed) == 500_000)
    }
}
