import Synchronization

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
