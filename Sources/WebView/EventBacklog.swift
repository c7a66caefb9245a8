import Synchronization

/// The last `capacity` event lines, numbered from 1 in the order they were written: what the
/// web view's `/events` streams, and what a browser that reconnects with `Last-Event-ID` resumes
/// from. Bounded, so a slow or stalled browser never holds memory or the radios: it falls
/// behind (see `EventCursor`), the writers never wait.
package final class EventBacklog: Sendable {
    package struct Entry: Sendable, Equatable {
        package var id: Int
        package var line: String
        /// `range` lines are the ones a client that has fallen behind skips.
        package var isRange: Bool
    }

    private struct State {
        var ring: [Entry] = []
        /// Index in `ring` of the oldest entry once it is full.
        var head = 0
        var nextID = 1
        /// Clients waiting for a line (`waitForLine`), by ticket; `nil` marks one cancelled
        /// before it began to wait.
        var waiters: [UInt64: CheckedContinuation<Void, Never>?] = [:]
        var nextTicket: UInt64 = 0
    }
    private let state = Mutex(State())
    package let capacity: Int

    package init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Appends lines in order, numbering them, and wakes the clients waiting for them.
    package func append(_ lines: [(line: String, isRange: Bool)]) {
        let waiters = state.withLock { s in
            for (line, isRange) in lines {
                let entry = Entry(id: s.nextID, line: line, isRange: isRange)
                s.nextID += 1
                if s.ring.count < capacity {
                    s.ring.append(entry)
                } else {
                    s.ring[s.head] = entry
                    s.head = (s.head + 1) % capacity
                }
            }
            guard !lines.isEmpty, !s.waiters.isEmpty else { return [CheckedContinuation<Void, Never>]() }
            defer { s.waiters = [:] }
            return s.waiters.values.compactMap { $0 }
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once there is a line after `id`, or the task is cancelled.
    package func waitForLine(after id: Int) async {
        let ticket = state.withLock { s in
            defer { s.nextTicket += 1 }
            return s.nextTicket
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s in
                    if s.nextID - 1 > id || s.waiters.removeValue(forKey: ticket) != nil { return true }
                    s.waiters[ticket] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s in
                guard let waiting = s.waiters.removeValue(forKey: ticket) else {
                    s.waiters[ticket] = .some(nil)  // cancelled before it began to wait
                    return CheckedContinuation<Void, Never>?.none
                }
                return waiting
            }
            waiter?.resume()
        }
    }

    /// The id of the newest line (0 before the first).
    package var latestID: Int { state.withLock { $0.nextID - 1 } }

    /// Up to `limit` entries after `id`, oldest first; they start later than `id + 1` when the
    /// lines in between have left the backlog.
    package func entries(after id: Int, limit: Int) -> [Entry] {
        state.withLock { s in
            guard let oldest = s.ring.isEmpty ? nil : s.ring[s.head].id, id < s.nextID - 1 else { return [] }
            let first = max(id + 1, oldest)
            let count = min(limit, s.nextID - first)
            return (0..<count).map { s.ring[(s.head + first - oldest + $0) % s.ring.count] }
        }
    }
}
