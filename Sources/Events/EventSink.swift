import Glibc
import Synchronization

/// One destination of the event stream: it receives the stream's typed events, in the order
/// they were emitted, a batch at a time with the batch's timestamp, and does with them what it
/// does (render JSON Lines onto stdout or into a file, feed a socket, count...) with its own
/// buffer and its own policy when it cannot keep up.
///
/// Adding a destination is one type conforming here plus one line where the command assembles
/// its sinks (`CommonOptions.bootstrap`).
///
/// `receive` is called by `EventStream` with the stream's lock held, so every sink sees the
/// batches in the same order; it must not emit into the stream (that would deadlock), and what
/// it does there delays every emitter: a sink that can be slow queues, sheds or waits on its own
/// terms (see `JSONLinesSink`).
package protocol EventSink: Sendable {
    /// Takes `events`, in order, observed at `timestampMilliseconds` (Unix epoch, UTC).
    func receive(_ events: [Event], timestampMilliseconds: Int64)

    /// Returns once everything received so far is out, the sink failed, or (after
    /// `stopWaiting(within:)`) its deadline passed, and says what was not delivered.
    func drain() -> DrainResult

    /// The process is stopping: from now on the sink never makes an emitter wait, and `drain`
    /// returns within `timeout`. Calling it again never extends an earlier deadline.
    func stopWaiting(within timeout: Duration)

    /// How many of `node`'s `range` events this sink shed since the last call, and starts
    /// counting again.
    func takeShedRanges(node: String) -> Int

    /// Lines (or events) waiting in the sink's buffer.
    var queuedLines: Int { get }

    /// Whether the sink wants `range` events at all; when no sink does, the stream drops them
    /// before taking its lock.
    var includesRanges: Bool { get }
}

extension EventSink {
    package func stopWaiting(within timeout: Duration) {}
    package func takeShedRanges(node: String) -> Int { 0 }
    package var queuedLines: Int { 0 }
    package var includesRanges: Bool { true }
}

/// How a sink (or the whole stream) ended up when it was drained.
package struct DrainResult: Sendable {
    /// Lines that were emitted (or refused) but never written: lost to a failed output, or
    /// still waiting when the stop deadline passed.
    package var unwritten: Int
    /// The output's first failure, if it failed.
    package var failure: (any Error)?

    package init(unwritten: Int = 0, failure: (any Error)? = nil) {
        self.unwritten = unwritten
        self.failure = failure
    }
}

/// Renders events as JSON Lines (README "Events (schema v1)") onto an `EventOutput`, stamping
/// its own `seq`: +1 per line it writes, so each destination's lines run 1, 2, 3... whatever
/// another destination dropped.
///
/// Unbuffered, each batch is written before `receive` returns: a slow output slows the
/// emitter, and nothing is ever dropped (tests, the capture's events.jsonl). Buffered (stdout), a
/// writer thread drains a bounded queue (`LineBuffer`) so the radios never wait for the output;
/// past its soft limit `range` events are shed (counted per node, for the `stats` event) and
/// every other event still goes in, up to a hard limit at which the emitter waits:
/// near/far/bump/peer events are never dropped. After `stopWaiting(within:)` nothing waits for
/// the output any more.
///
/// A failed write (EPIPE, ENOSPC, EBADF...) ends the output: `onFailure` is called exactly once,
/// with the error, and no line is written after it; `drain()` reports it and counts what was
/// lost. `onFailure` runs on the emitting thread (with the stream's lock held) or on the writer
/// thread; it must not emit.
package final class JSONLinesSink: EventSink {
    private struct State {
        var nextSeq: UInt64 = 1
        /// Unbuffered: the output's failure, and the lines lost to it.
        var failure: (any Error)?
        var unwritten = 0
        /// Range events shed since the node last asked, by node.
        var shed: [String: Int] = [:]
        /// Where lines are built (see `JSONLine.render(_:seq:timestampMilliseconds:scratch:)`),
        /// and a batch's lines gathered: both kept between batches, emptied.
        var scratch: [UInt8] = []
        var lines: [String] = []
    }
    private let state = Mutex(State())
    private let output: any EventOutput
    private let buffer: LineBuffer?
    /// `range` events are high-volume; they are written only when asked for (`--ranges`).
    package let includesRanges: Bool
    private let onFailure: @Sendable (any Error) -> Void

    /// - Parameter bufferedLines: when set, lines go through a queue of this many lines (soft
    ///   limit) drained by a writer thread; nil writes each batch before `receive` returns.
    package init(
        output: any EventOutput, includesRanges: Bool, bufferedLines: Int? = nil,
        onFailure: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.output = output
        self.includesRanges = includesRanges
        self.onFailure = onFailure
        self.buffer = bufferedLines.map { LineBuffer(softLimit: $0, output: output, onFailure: onFailure) }
    }

    package func receive(_ events: [Event], timestampMilliseconds: Int64) {
        let events = includesRanges || !events.contains(where: \.isSheddable) ? events : events.filter { !$0.isSheddable }
        guard !events.isEmpty else { return }
        if let buffer {
            let failure: (any Error)? = state.withLock { state in
                var lines = state.lines
                state.lines = []
                defer {
                    lines.removeAll(keepingCapacity: true)
                    state.lines = lines
                }
                var seq = state.nextSeq
                let pastSoftLimit = buffer.isPastSoftLimit
                for event in events {
                    if event.isSheddable, pastSoftLimit {
                        state.shed[event.node, default: 0] += 1
                        continue
                    }
                    lines.append(JSONLine.render(event, seq: seq, timestampMilliseconds: timestampMilliseconds, scratch: &state.scratch))
                    seq += 1
                }
                guard !lines.isEmpty else { return nil }
                switch buffer.push(lines) {
                case .accepted:
                    state.nextSeq = seq
                    return nil
                case .refused: return nil
                case .failed(let error): return error
                }
            }
            if let failure { onFailure(failure) }
            return
        }
        let failure: (any Error)? = state.withLock { state in
            guard state.failure == nil else {
                state.unwritten += events.count
                return nil
            }
            var seq = state.nextSeq
            let lines = events.map { event in
                defer { seq += 1 }
                return JSONLine.render(event, seq: seq, timestampMilliseconds: timestampMilliseconds, scratch: &state.scratch)
            }
            do {
                try output.write(lines: lines)
                state.nextSeq = seq
                return nil
            } catch {
                state.failure = error
                state.unwritten += lines.count
                return error
            }
        }
        if let failure { onFailure(failure) }
    }

    package func takeShedRanges(node: String) -> Int {
        state.withLock { $0.shed.removeValue(forKey: node) ?? 0 }
    }

    /// Lines waiting for the output (0 when unbuffered).
    package var queuedLines: Int { buffer?.count ?? 0 }

    package func drain() -> DrainResult {
        if let buffer {
            let drained = buffer.drain()
            return DrainResult(unwritten: drained.unwritten, failure: drained.failure)
        }
        return state.withLock { DrainResult(unwritten: $0.unwritten, failure: $0.failure) }
    }

    package func stopWaiting(within timeout: Duration) {
        guard let buffer else { return }
        let (seconds, attoseconds) = timeout.components
        var deadline = LineBuffer.now()
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        buffer.stopWaiting(until: deadline)
    }
}
