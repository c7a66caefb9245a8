import Events
import Synchronization
import Watch

/// The web view's destination in the event stream: each event as the JSON line stdout would
/// carry (numbered by this sink, as every destination numbers its own lines) into the bounded
/// backlog `/events` streams from, and into the peer table `/state` answers from. It never
/// waits and never sheds: slow browsers fall behind in the backlog on their own (EventCursor).
public final class WebSink: EventSink {
    public let backlog: EventBacklog
    private struct State {
        var seq: UInt64 = 0
        var view = LiveView()
    }
    private let state = Mutex(State())

    public init(backlog: EventBacklog) {
        self.backlog = backlog
    }

    public func receive(_ events: [Event], timestampMilliseconds: Int64) {
        let lines = state.withLock { s in
            events.map { event in
                s.seq += 1
                s.view.apply(event, timestampMilliseconds: timestampMilliseconds)
                let line = JSONLine.render(event, seq: s.seq, timestampMilliseconds: timestampMilliseconds)
                return (line: String(line.dropLast()), isRange: event.isSheddable)
            }
        }
        backlog.append(lines)
    }

    public func drain() -> DrainResult { DrainResult() }

    /// The peer table now.
    public var view: LiveView { state.withLock { $0.view } }
}
