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
    }
    private let state = Mutex(State())
    package let capacity: Int

    package init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Appends lines in order, numbering them.
    package func append(_ lines: [(line: String, isRange: Bool)]) {
        state.withLock { s in
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

/// One `/events` client's place in the backlog. While it is more than `lagLimit` lines behind
/// (a phone on a weak network, a tab in the background) it skips `range` lines, which the next
/// round repeats, and counts them; lines that left the backlog before it read them are counted
/// as lost, and the stream says so.
package struct EventCursor: Sendable {
    package private(set) var lastID: Int
    package private(set) var shed = 0
    package private(set) var lost = 0
    package let lagLimit: Int

    /// A cursor after line `lastID` (0: from the oldest line still held).
    package init(after lastID: Int, lagLimit: Int) {
        self.lastID = lastID
        self.lagLimit = lagLimit
    }

    /// A browser's cursor: after its `Last-Event-ID` when it reconnects, from now when it comes
    /// for the first time, and from now too when its id is ahead of the backlog (the process
    /// restarted and numbers its lines from 1 again: waiting for the numbers to catch up would
    /// leave the page silent).
    package init(resumingAfter lastEventID: Int?, in backlog: EventBacklog, lagLimit: Int) {
        let latest = backlog.latestID
        self.init(after: lastEventID.flatMap { $0 <= latest ? $0 : nil } ?? latest, lagLimit: lagLimit)
    }

    /// What to send next, at most `limit` lines, and how many were lost just now.
    package mutating func next(from backlog: EventBacklog, limit: Int) -> (entries: [EventBacklog.Entry], lost: Int) {
        let latest = backlog.latestID
        let entries = backlog.entries(after: lastID, limit: limit)
        guard let first = entries.first, let last = entries.last else { return ([], 0) }
        let gap = lastID > 0 ? first.id - lastID - 1 : 0
        lost += gap
        let behind = latest - lastID > lagLimit
        lastID = last.id
        guard behind else { return (entries, gap) }
        let kept = entries.filter { !$0.isRange }
        shed += entries.count - kept.count
        return (kept, gap)
    }
}
