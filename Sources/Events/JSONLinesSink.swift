import Glibc
import Synchronization

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
        /// Where lines are built: unbuffered, one at a time (see
        /// `JSONLine.render(_:seq:timestampMilliseconds:scratch:)`); buffered, a batch's lines one
        /// after another, with where each ends. Kept between batches, emptied.
        var scratch: [UInt8] = []
        var lineEnds: [Int] = []
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
                state.scratch.removeAll(keepingCapacity: true)
                state.lineEnds.removeAll(keepingCapacity: true)
                var seq = state.nextSeq
                let pastSoftLimit = buffer.isPastSoftLimit
                for event in events {
                    if event.isSheddable, pastSoftLimit {
                        state.shed[event.node, default: 0] += 1
                        continue
                    }
                    JSONLine.append(event, seq: seq, timestampMilliseconds: timestampMilliseconds, to: &state.scratch)
                    state.lineEnds.append(state.scratch.count)
                    seq += 1
                }
                guard !state.lineEnds.isEmpty else { return nil }
                switch buffer.push(state.scratch, lineEnds: state.lineEnds) {
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
