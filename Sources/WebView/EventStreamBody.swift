import FlyingFox
import FlyingSocks
import Foundation
import Proximity
import Watch

/// The bytes of an endless `text/event-stream`: every backlog line after the cursor as an event
/// (`id:` and `data:`) as soon as it is appended; a comment after 15 s without one keeps proxies
/// and phones from closing an idle stream and says how many lines this client lost or skipped.
struct EventStreamBody: AsyncBufferedSequence {
    typealias Element = UInt8
    let backlog: EventBacklog
    let cursor: EventCursor

    func makeAsyncIterator() -> Iterator { Iterator(backlog: backlog, cursor: cursor) }

    struct Iterator: AsyncBufferedIteratorProtocol {
        let backlog: EventBacklog
        var cursor: EventCursor
        var quietSince = ContinuousClock.now

        mutating func next() async throws -> UInt8? {
            try await nextBuffer(suggested: 1)?.first
        }

        mutating func nextBuffer(suggested count: Int) async throws -> [UInt8]? {
            while !Task.isCancelled {
                let (entries, lost) = cursor.next(from: backlog, limit: 256)
                var out = ""
                if lost > 0 { out += ": \(lost) lines left the backlog before they were sent\n\n" }
                for entry in entries { out += "id: \(entry.id)\ndata: \(entry.line)\n\n" }
                if ContinuousClock.now - quietSince >= Self.keepAlive {
                    out += ": skipped \(cursor.shed) range lines while behind, lost \(cursor.lost)\n\n"
                }
                if !out.isEmpty {
                    quietSince = .now
                    return Array(out.utf8)
                }
                // The next line, or the keep-alive comment when none comes for 15 s.
                await withTaskGroup(of: Void.self) { [backlog, lastID = cursor.lastID, quietSince] group in
                    group.addTask { await backlog.waitForLine(after: lastID) }
                    group.addTask { try? await Task.sleep(until: quietSince + Self.keepAlive, clock: .continuous) }
                    await group.next()
                    group.cancelAll()
                }
            }
            return nil
        }

        static let keepAlive: Duration = .seconds(15)
    }
}
