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
