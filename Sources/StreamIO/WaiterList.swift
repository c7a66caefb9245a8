import Synchronization

/// A state behind a lock, and the tasks waiting until it meets a condition (a tracker's count
/// reaching zero, a node having stopped, a command slot coming free, a queue having something):
/// each change through `update` resumes, in the order they came, the waiters the condition now
/// lets through.
///
/// A waiter may claim the state as it goes (`wait(then:)`): its change is made, and its result
/// taken, under the same lock before the next waiter is looked at, so a slot that comes free
/// passes to exactly one waiter, first come first served, and a queue's items to one consumer.
/// Waiting cannot be cancelled: the condition is expected to come true (every user's work ends).
package final class WaiterList<State: Sendable>: Sendable {
    /// Makes a waiter's change under the lock; returns what resumes it, called after the lock.
    private typealias Claim = @Sendable (inout State) -> @Sendable () -> Void

    private struct Guarded {
        var state: State
        var waiters: [Claim] = []
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
            var released: [@Sendable () -> Void] = []
            while !g.waiters.isEmpty, condition(g.state) {
                released.append(g.waiters.removeFirst()(&g.state))
            }
            return released
        }
        for resume in released { resume() }
    }

    /// How many wait (for tests and diagnostics).
    package var waiting: Int { guarded.withLock { $0.waiters.count } }

    /// Returns once the condition holds (at once if it does and nobody waits before).
    package func wait() async {
        await wait { _ in }
    }

    /// Returns, once the condition holds, what `claim` made of the state under the lock (a
    /// change, a batch taken out).
    package func wait<Value: Sendable>(then claim: @escaping @Sendable (inout State) -> Value) async -> Value {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            let now = guarded.withLock { g -> (@Sendable () -> Void)? in
                let resume: Claim = { state in
                    let value = claim(&state)
                    return { continuation.resume(returning: value) }
                }
                guard g.waiters.isEmpty, condition(g.state) else {
                    g.waiters.append(resume)
                    return nil
                }
                return resume(&g.state)
            }
            now?()
        }
    }
}
