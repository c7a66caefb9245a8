import Testing

@testable import WebView

/// The web view's bounded backlog and a client's cursor in it: resume after a reconnect, lines
/// lost when a client fell out of the backlog, range lines skipped while it is far behind.
@Suite struct EventBacklogTests {
    static func backlog(capacity: Int, lines: Int, rangeEvery: Int = 0) -> EventBacklog {
        let backlog = EventBacklog(capacity: capacity)
        backlog.append((1...lines).map { ("line \($0)", rangeEvery > 0 && $0 % rangeEvery != 0) })
        return backlog
    }

    @Test func aReconnectResumesAfterTheLastLineItGot() {
        let backlog = Self.backlog(capacity: 100, lines: 30)
        var cursor = EventCursor(after: 25, lagLimit: 1000)  // Last-Event-ID: 25
        let (entries, lost) = cursor.next(from: backlog, limit: 100)
        #expect(entries.map(\.id) == [26, 27, 28, 29, 30])
        #expect(entries.first?.line == "line 26")
        #expect(lost == 0)
        #expect(cursor.next(from: backlog, limit: 100).entries.isEmpty)
        backlog.append([("line 31", false)])
        #expect(cursor.next(from: backlog, limit: 100).entries.map(\.id) == [31])
    }

    /// A first visit starts at the newest line; an id from before a restart (ahead of this
    /// process's numbering) starts there too instead of waiting for the numbers to catch up.
    @Test func aNewOrStaleClientStartsAtTheNewestLine() {
        let backlog = Self.backlog(capacity: 100, lines: 30)
        for id in [nil, 5_000] as [Int?] {
            let newest = backlog.latestID
            var cursor = EventCursor(resumingAfter: id, in: backlog, lagLimit: 1000)
            #expect(cursor.lastID == newest)
            backlog.append([("next", false)])
            #expect(cursor.next(from: backlog, limit: 10).entries.map(\.line) == ["next"])
        }
        #expect(EventCursor(resumingAfter: 12, in: backlog, lagLimit: 1000).lastID == 12)
    }

    @Test func linesThatLeftTheBacklogAreCountedLost() {
        let backlog = Self.backlog(capacity: 10, lines: 50)  // holds 41...50
        #expect(backlog.entries(after: 0, limit: 100).map(\.id) == Array(41...50))
        var cursor = EventCursor(after: 35, lagLimit: 1000)
        let (entries, lost) = cursor.next(from: backlog, limit: 4)
        #expect(entries.map(\.id) == [41, 42, 43, 44])
        #expect(lost == 5)  // 36...40
        #expect(cursor.next(from: backlog, limit: 100).entries.map(\.id) == Array(45...50))
        #expect(cursor.lost == 5)
    }

    /// A client far behind skips range lines (counted) until it has caught up; every other
    /// line still comes, in order.
    @Test func aClientFarBehindSkipsRangeLinesOnly() {
        let backlog = Self.backlog(capacity: 2000, lines: 1000, rangeEvery: 10)  // every 10th is not a range
        var cursor = EventCursor(after: 0, lagLimit: 100)
        var got: [Int] = []
        while true {
            let entries = cursor.next(from: backlog, limit: 50).entries
            if entries.isEmpty { break }
            got += entries.map(\.id)
        }
        #expect(got.filter { $0 % 10 == 0 } == Array(stride(from: 10, through: 1000, by: 10)))
        #expect(got.count < 1000 && cursor.shed == 1000 - got.count)
        #expect(got.contains(999))  // the last 100 lines came whole: it had caught up
    }

    /// `/events` waits for the next line rather than polling (issue 30): the append wakes it.
    @Test(.timeLimit(.minutes(1))) func aWaitEndsWithTheNextLine() async {
        let backlog = EventBacklog(capacity: 4)
        backlog.append([("line 1", false)])
        await backlog.waitForLine(after: 0)  // already there: at once
        let waiting = Task { await backlog.waitForLine(after: 1) }
        backlog.append([("line 2", false)])
        await waiting.value
        #expect(backlog.latestID == 2)
    }

    /// A client that goes away (its task cancelled) stops waiting, with or without a new line.
    @Test(.timeLimit(.minutes(1))) func cancellingEndsTheWait() async {
        let backlog = EventBacklog(capacity: 4)
        let waiting = Task { await backlog.waitForLine(after: 0) }
        waiting.cancel()
        await waiting.value
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await backlog.waitForLine(after: 0)
        }
        await cancelledFirst.value
        #expect(backlog.latestID == 0)
    }
}
