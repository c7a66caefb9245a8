import Synchronization

/// A state behind a lock, and the tasks waiting until it meets a condition (a tracker's count
/// reaching zero, a node having stopped, a command slot coming free): each change through
/// `update` resumes, in the order they came, the waiters the condition now lets through.
///
/// A waiter may claim the state as it goes (`wait(then:)`): its change is made under the same
/// lock before the next waiter is looked at, so a slot that comes free passes to exactly one
/// waiter, first come first served. Waiting cannot be cancelled: the condition is expected to
/// come true (every user's work ends).
package final class WaiterList<State: Sendable>: Sendable {
    private struct Waiter {
        var claim: @Sendable (inout State) -> Void
        var continuation: CheckedContinuation<Void, Never>
    }
    private struct Guarded {
        var state: State
        var waiters: [Waiter] = []
    }
    private let guarded: Mutex<Guarded>
    private let condition: @Sendable (State) -> Bool

    /// - Parameter condition: what a waiter waits for.
    package init(_ initial: State, until condition: @escaping @Sendable (State) -> Bool) {
        guarded = Mutex(Guarded(state: initial))
        self.condition = condition
    }

    /// Changes the state, then resumes the waiters it lets through.
    package func update(_ change: (inout State) -> Void) {
        let released = guarded.withLock { g in
            change(&g.state)
            var released: [CheckedContinuation<Void, Never>] = []
            while let first = g.waiters.first, condition(g.state) {
                g.waiters.removeFirst()
                first.claim(&g.state)
                released.append(first.continuation)
            }
            return released
        }
        for continuation in released { continuation.resume() }
    }

    /// How many wait (for tests and diagnostics).
    package var waiting: Int { guarded.withLock { $0.waiters.count } }

    /// Returns once the condition holds (at once if it does and nobody waits before), after
    /// making `claim`'s change under the lock.
    package func wait(then claim: @escaping @Sendable (inout State) -> Void = { _ in }) async {
        await withCheckedContinuation { continuation in
            let now = guarded.withLock { g in
                guard g.waiters.isEmpty, condition(g.state) else {
                    g.waiters.append(Waiter(claim: claim, continuation: continuation))
                    return false
                }
                claim(&g.state)
                return true
            }
            if now { continuation.resume() }
        }
    }
}
