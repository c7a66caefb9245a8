import Synchronization

/// Counts work that has been handed to a node but not finished, so a simulation driver can wait
/// until the node is idle before advancing virtual time. That wait is what makes a seeded run
/// reproduce the same event stream every time. Real radios run without one.
package final class WorkTracker: Sendable {
    private struct State {
        var outstanding = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    package init() {}

    package func begin(_ count: Int = 1) {
        state.withLock { $0.outstanding += count }
    }

    package func end(_ count: Int = 1) {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { s in
            s.outstanding -= count
            precondition(s.outstanding >= 0, "WorkTracker.end without begin")
            guard s.outstanding == 0 else { return [] }
            defer { s.waiters = [] }
            return s.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Returns once nothing is outstanding.
    package func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            let idle = state.withLock { s in
                if s.outstanding == 0 { return true }
                s.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
