import Events
import Synchronization
import Watch

/// The web view's destination in the event stream: each event as the JSON line stdout would
/// carry (numbered by this sink, as every destination numbers its own lines) into the bounded
/// backlog `/events` streams from, and into the peer table `/state` answers from. It never
/// waits and never sheds: slow browsers fall behind in the backlog on their own (EventCursor).
package final class WebSink: EventSink {
    package let backlog: EventBacklog
    package let metrics: BridgeMetrics
    private struct State {
        var seq: UInt64 = 0
        var view = LiveView()
    }
    private let state = Mutex(State())

    package init(backlog: EventBacklog, metrics: BridgeMetrics) {
        self.backlog = backlog
        self.metrics = metrics
    }

    package func receive(_ events: [Event], timestampMilliseconds: Int64) {
        let lines = state.withLock { s in
            let lines = events.map { event in
                s.seq += 1
                s.view.apply(event, timestampMilliseconds: timestampMilliseconds)
                let line = JSONLine.render(event, seq: s.seq, timestampMilliseconds: timestampMilliseconds)
                return (line: String(line.dropLast()), isRange: event.isSheddable)
            }
            metrics.record(events, lastSeq: s.seq)
            return lines
        }
        backlog.append(lines)
    }

    package func drain() -> DrainResult { DrainResult() }

    /// The peer table now.
    package var view: LiveView { state.withLock { $0.view } }

    /// `/metrics` now: taken with the sink's lock, so the event counts and `nearby_event_seq`
    /// describe the same moment (a scrape briefly holds up the emitters).
    package func metricsExposition() -> String {
        state.withLock { _ in metrics.exposition() }
    }
}
