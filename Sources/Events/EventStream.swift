import Glibc
import Synchronization
import SystemPackage

/// The single per-process event stream: it hands every batch of typed events, in emit order, to
/// each of its sinks (stdout's JSON Lines, the capture's events.jsonl, ...), each with its own
/// buffer, `seq` and shedding policy.
///
/// Batches go to the sinks under one lock, so concurrent emitters never interleave and every
/// sink sees the same order. A sink that cannot keep up decides for itself: stdout's sheds
/// `range` events (counted per node, for the `stats` event) and makes the emitter wait only for
/// the events that must not be dropped; the capture's never drops anything. Once the process is
/// stopping (`stopWaiting(within:)`), no sink waits for its output any more.
package final class EventStream: Sendable {
    package let sinks: [any EventSink]
    private let order = Mutex(())
    /// Whether any sink wants `range` events (`--ranges`); when none does they are dropped
    /// before the lock.
    package let includesRanges: Bool

    package init(sinks: [any EventSink]) {
        self.sinks = sinks
        self.includesRanges = sinks.contains { $0.includesRanges }
    }

    /// A stream with one sink: JSON Lines onto `output` (see `JSONLinesSink`).
    ///
    /// - Parameter bufferedLines: when set, lines go through a queue of this many lines (soft
    ///   limit) drained by a writer thread; nil writes each line before `emit` returns.
    package convenience init(
        output: any EventOutput, includesRanges: Bool, bufferedLines: Int? = nil,
        onFailure: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.init(sinks: [JSONLinesSink(output: output, includesRanges: includesRanges, bufferedLines: bufferedLines, onFailure: onFailure)])
    }

    /// Emits `event` observed at `timestampMilliseconds` (Unix epoch, UTC).
    package func emit(_ event: Event, timestampMilliseconds: Int64) {
        emit([event], timestampMilliseconds: timestampMilliseconds)
    }

    /// Emits `events`, in order, observed at `timestampMilliseconds`: one lock and one hand-off
    /// to each sink for all of them (a peer's ranging rounds from one radio read).
    package func emit(_ events: [Event], timestampMilliseconds: Int64) {
        let events = includesRanges || !events.contains(where: \.isSheddable) ? events : events.filter { !$0.isSheddable }
        guard !events.isEmpty else { return }
        order.withLock { _ in
            for sink in sinks { sink.receive(events, timestampMilliseconds: timestampMilliseconds) }
        }
    }

    /// How many of `node`'s range events were shed since the last call, summed over the sinks,
    /// and starts counting again. Only stdout's sink sheds (the capture's never does), so this is
    /// what the README's `stats.shed_ranges` promises: range events stdout did not get.
    package func takeShedRanges(node: String) -> Int {
        sinks.reduce(0) { $0 + $1.takeShedRanges(node: node) }
    }

    /// Lines waiting in the sinks' buffers (0 when unbuffered).
    package var queuedLines: Int { sinks.reduce(0) { $0 + $1.queuedLines } }

    /// Returns once every sink has written every line emitted so far, failed, or (after
    /// `stopWaiting(within:)`) passed its deadline, and says what was not written: the lines
    /// of all sinks, and the first sink's failure (in sink order). Call it before the process
    /// exits.
    @discardableResult
    package func drain() -> DrainResult {
        var result = DrainResult()
        for sink in sinks {
            let drained = sink.drain()
            result.unwritten += drained.unwritten
            if result.failure == nil { result.failure = drained.failure }
        }
        return result
    }

    /// The process is stopping: from now on emitters never wait for a slow output (lines that
    /// would are dropped and counted as unwritten), and `drain()` returns within `timeout` of
    /// this call. Calling it again never extends an earlier deadline.
    package func stopWaiting(within timeout: Duration) {
        for sink in sinks { sink.stopWaiting(within: timeout) }
    }
}
