import Synchronization

/// The one reply a request waits for: created before the request goes out (a fast answer may
/// come before anyone waits for it), resumed once by whichever comes first: the answer, a
/// failure, or the owner's timer with its timeout error.
///
/// Resuming twice is not an error: the second is refused (`false`), which is how an owner tells
/// a late answer from a due one. One waiter; it cannot be cancelled, because its owner's
/// deadline always ends it.
package final class ReplySlot<Value: Sendable, Failure: Error>: Sendable {
    private struct State {
        var result: Result<Value, Failure>?
        var waiter: CheckedContinuation<Result<Value, Failure>, Never>?
    }
    private let state = Mutex(State())

    package init() {}

    /// Hands `result` to the waiter, now or when it comes; false if the slot had its result already.
    @discardableResult
    package func resume(with result: Result<Value, Failure>) -> Bool {
        let outcome = state.withLock { s -> (taken: Bool, waiter: CheckedContinuation<Result<Value, Failure>, Never>?) in
            guard s.result == nil else { return (false, nil) }
            s.result = result
            defer { s.waiter = nil }
            return (true, s.waiter)
        }
        outcome.waiter?.resume(returning: result)
        return outcome.taken
    }

    /// The result, once there is one.
    package var result: Result<Value, Failure> {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { s -> Result<Value, Failure>? in
                    if let result = s.result { return result }
                    precondition(s.waiter == nil, "ReplySlot has a single waiter")
                    s.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
