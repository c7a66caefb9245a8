import Foundation

/// Runs CPU-bound work on a thread of its own and waits for it without holding a thread of
/// Swift's cooperative pool. The pool has one thread per core (two on the CI machine), and every
/// test's tasks share it: two minute-long evaluations on it left all other tests, and the real
/// deadlines some of them wait on, without a turn for a minute (CI of 2026-11-27: three UCI host
/// tests timed out). On threads of their own, the kernel shares the cores among everyone.
func onItsOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
