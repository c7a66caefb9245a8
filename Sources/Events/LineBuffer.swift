import Glibc
import StreamIO

/// The bounded queue between the nodes and a slow output (stdout into a pipe), drained by its own
/// POSIX thread so a blocking `write` never holds up a node.
///
/// Limits: `softLimit` lines, past which `EventStream` sheds `range` events; four times that, past
/// which `push` waits for the writer (backpressure instead of loss, for the events that must not
/// be dropped). After `stopWaiting(until:)` nothing waits any more: lines past the hard limit are
/// refused (and counted), and `drain` gives up at the deadline. A failed write ends the output;
/// later pushes are refused, and the failure is reported exactly once.
///
/// Wake-ups: when the queue is empty, nobody is writing and the output says a short write will
/// not wait (`EventOutput.isWritableWithoutWaiting`), the pushing thread writes the lines itself
/// and the writer thread sleeps on; otherwise the lines are queued, and the writer is signalled
/// only when it is idle (a busy writer takes everything queued meanwhile in its next round). Only
/// one thread writes at a time (`busy`), so lines keep their order and never interleave.
final class LineBuffer: @unchecked Sendable {
    /// What became of a pushed batch.
    enum Pushed {
        /// Written by the caller, or queued for the writer.
        case accepted
        /// Not taken: the output failed earlier, or stopping and at the hard limit.
        case refused
        /// The caller's own write just failed with this error (reported here, not to `onFailure`).
        case failed(any Error)
    }

    /// Where a drain ended.
    struct Drained {
        /// Lines accepted or offered but never written (queued at a failure or at the deadline,
        /// in the write that failed, or refused).
        var unwritten: Int
        var failure: (any Error)?
    }

    // All mutable state below is guarded by `mutex`. `work` wakes the writer, `progress` the
    // threads waiting for room or for the queue to empty.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let work = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let progress = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var lines: [String] = []
    /// Lines handed to the output but not yet written (the current write's).
    private var writing = 0
    /// A thread (the writer or a pushing one) is writing; nobody else may start.
    private var busy = false
    private var writerIdle = false
    private var waitingForProgress = 0
    private var failure: (any Error)?
    /// Lines refused or lost to a failure.
    private var lost = 0
    private var stopDeadline: timespec?

    let softLimit: Int
    private let hardLimit: Int
    private let output: any EventOutput
    private let onFailure: @Sendable (any Error) -> Void

    /// Writes of at most this many bytes are atomic on a pipe: a stop never leaves half a line.
    static let atomicBytes = Int(PIPE_BUF)

    init(softLimit: Int, output: any EventOutput, onFailure: @escaping @Sendable (any Error) -> Void) {
        precondition(softLimit > 0)
        self.softLimit = softLimit
        self.hardLimit = 4 * softLimit
        self.output = output
        self.onFailure = onFailure
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(work, &attributes)
        pthread_cond_init(progress, &attributes)
        pthread_condattr_destroy(&attributes)
        startWriter()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    var count: Int { locked { lines.count + writing } }
    var isPastSoftLimit: Bool { locked { lines.count + writing >= softLimit } }

    /// Queues lines (or writes them right away, see above), waiting while the queue is at its
    /// hard limit unless stopping (a batch goes in whole, so the queue may pass that limit by one
    /// batch). The batch comes rendered: its lines one after another in `bytes`, line `i` ending
    /// at `lineEnds[i]`; written right away, it is written as it is, and only queued lines become
    /// `String`s.
    func push(_ bytes: [UInt8], lineEnds: [Int]) -> Pushed {
        pthread_mutex_lock(mutex)
        while failure == nil, stopDeadline == nil, lines.count + writing >= hardLimit { waitForProgress() }
        if failure != nil || (stopDeadline != nil && lines.count + writing >= hardLimit) {
            lost += lineEnds.count
            pthread_mutex_unlock(mutex)
            return .refused
        }
        if !busy, lines.isEmpty, bytes.count <= Self.atomicBytes, output.isWritableWithoutWaiting() {
            busy = true
            writing = lineEnds.count
            pthread_mutex_unlock(mutex)
            do {
                try bytes.withUnsafeBytes { try output.write(utf8: $0, lineEnds: lineEnds) }
            } catch {
                fail(error)
                return .failed(error)
            }
            pthread_mutex_lock(mutex)
            busy = false
            writing = 0
            if !lines.isEmpty, writerIdle { pthread_cond_signal(work) }
            if waitingForProgress > 0 { pthread_cond_broadcast(progress) }
            pthread_mutex_unlock(mutex)
            return .accepted
        }
        var start = 0
        for end in lineEnds {
            lines.append(String(decoding: bytes[start..<end], as: UTF8.self))
            start = end
        }
        if !busy, writerIdle { pthread_cond_signal(work) }
        pthread_mutex_unlock(mutex)
        return .accepted
    }

    /// From now on nobody waits for the output: pushes at the hard limit are refused, and
    /// `drain` returns by `deadline` (CLOCK_MONOTONIC) at the latest.
    func stopWaiting(until deadline: timespec) {
        locked {
            if let current = stopDeadline, Self.isBefore(current, deadline) { return }
            stopDeadline = deadline
            pthread_cond_broadcast(progress)
        }
    }

    /// Waits until everything queued so far is written, the output failed, or the stop deadline
    /// passed; says what was not written.
    func drain() -> Drained {
        locked {
            while failure == nil, busy || !lines.isEmpty {
                if let deadline = stopDeadline {
                    if Self.isBefore(deadline, Self.now()) { break }
                    var at = deadline
                    waitingForProgress += 1
                    pthread_cond_timedwait(progress, mutex, &at)
                    waitingForProgress -= 1
                } else {
                    waitForProgress()
                }
            }
            return Drained(unwritten: lost + lines.count + writing, failure: failure)
        }
    }

    /// Called with `mutex` held.
    private func waitForProgress() {
        waitingForProgress += 1
        pthread_cond_wait(progress, mutex)
        waitingForProgress -= 1
    }

    /// Records the first failure; everything queued or being written is lost.
    private func fail(_ error: any Error) {
        locked {
            if failure == nil { failure = error }
            lost += lines.count + writing
            lines = []
            writing = 0
            busy = false
            pthread_cond_broadcast(progress)
            pthread_cond_signal(work)
        }
    }

    static func now() -> timespec {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return t
    }

    static func isBefore(_ a: timespec, _ b: timespec) -> Bool {
        a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec)
    }

    private func startWriter() {
        IOThread.detach(name: "stdout-writer") { [self] in writeLoop() }
    }

    deinit {
        pthread_cond_destroy(progress)
        pthread_cond_destroy(work)
        pthread_mutex_destroy(mutex)
        progress.deallocate()
        work.deallocate()
        mutex.deallocate()
    }

    /// Takes everything queued and writes it, in writes of at most `atomicBytes` (whole lines;
    /// a longer line goes alone), until the output fails. The writer keeps the buffer alive for
    /// the life of the process, like stdout itself.
    private func writeLoop() {
        while true {
            let batch: [String]? = locked {
                while failure == nil, lines.isEmpty || busy {
                    writerIdle = true
                    pthread_cond_wait(work, mutex)
                    writerIdle = false
                }
                guard failure == nil else { return nil }
                busy = true
                writing = lines.count
                defer { lines = [] }
                return lines
            }
            guard let batch else { return }
            var start = 0
            while start < batch.count {
                var end = start
                var bytes = 0
                while end < batch.count, end == start || bytes + batch[end].utf8.count <= Self.atomicBytes {
                    bytes += batch[end].utf8.count
                    end += 1
                }
                do {
                    try output.write(lines: start == 0 && end == batch.count ? batch : Array(batch[start..<end]))
                } catch {
                    fail(error)
                    onFailure(error)
                    return
                }
                let done = end - start
                let last = end == batch.count
                locked {
                    writing -= done
                    if last { busy = false }
                    if waitingForProgress > 0 { pthread_cond_broadcast(progress) }
                }
                start = end
            }
        }
    }
}
