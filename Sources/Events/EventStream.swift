import Glibc
import Synchronization
import SystemPackage

/// Where finished lines go. Each `write(line:)` receives exactly one complete line.
package protocol EventOutput: Sendable {
    func write(line: String) throws
    /// Several complete lines at once, in order; outputs that can write them in one call do.
    func write(lines: [String]) throws
    /// Whether a write of up to `PIPE_BUF` bytes would return without waiting for a reader. When
    /// it would, the buffered stream writes on the emitting thread instead of waking its writer
    /// thread. Outputs that cannot tell say false (the default).
    func isWritableWithoutWaiting() -> Bool
}

extension EventOutput {
    package func write(lines: [String]) throws {
        for line in lines { try write(line: line) }
    }

    package func isWritableWithoutWaiting() -> Bool { false }
}

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

/// Writes lines to file descriptor 1 (or another one). A full pipe blocks the writer rather than
/// dropping or truncating a line; a failed write (a closed pipe, a full disk) throws
/// `OutputError`, which `JSONLinesSink` reports once through its failure handler.
package struct StandardOutputEvents: EventOutput {
    private let fd: FileDescriptor
    /// A regular file or a device such as /dev/null, which `poll` always reports writable: no
    /// need to ask before each line.
    private let neverFull: Bool

    package init(fileDescriptor: Int32 = 1) {
        fd = FileDescriptor(rawValue: fileDescriptor)
        var status = stat()
        let kind = fstat(fileDescriptor, &status) == 0 ? status.st_mode & S_IFMT : 0
        neverFull = kind == S_IFREG || (kind == S_IFCHR && isatty(fileDescriptor) == 0)
    }

    package func write(line: String) throws {
        try write(lines: [line])
    }

    /// Writes all lines with one system call where the output takes them whole.
    package func write(lines: [String]) throws {
        do {
            if lines.count == 1 {
                var line = lines[0]
                _ = try line.withUTF8 { try fd.writeAll(UnsafeRawBufferPointer($0)) }
                return
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count })
            for line in lines { bytes.append(contentsOf: line.utf8) }
            _ = try bytes.withUnsafeBytes { try fd.writeAll($0) }
        } catch let error as Errno {
            throw OutputError(errno: error.rawValue)
        }
    }

    /// A pipe with room for `PIPE_BUF` bytes, a socket with room, a regular file, /dev/null.
    package func isWritableWithoutWaiting() -> Bool {
        if neverFull { return true }
        var request = pollfd(fd: fd.rawValue, events: Int16(POLLOUT), revents: 0)
        return poll(&request, 1, 0) == 1 && request.revents & Int16(POLLOUT) != 0
    }

    /// Ends a line left cut short in the file the events go to (a power cut while the previous
    /// run appended to `/var/log/nearby-bridge/events.jsonl`): without the newline this adds, the
    /// first event of this run would be glued to the torn one and both would be lost to every
    /// reader. True when it added one. Only for a regular file, read through `/proc/self/fd`
    /// since the descriptor itself is usually write-only (O_APPEND).
    package static func endTornLine(fileDescriptor: Int32 = 1) -> Bool {
        var status = stat()
        guard fstat(fileDescriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0 else { return false }
        let reader = open("/proc/self/fd/\(fileDescriptor)", O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { return false }
        defer { close(reader) }
        var last: UInt8 = 0
        guard pread(reader, &last, 1, status.st_size - 1) == 1, last != UInt8(ascii: "\n") else { return false }
        var newline = UInt8(ascii: "\n")
        return Glibc.write(fileDescriptor, &newline, 1) == 1
    }

    /// Throws when file descriptor 1 was not open when the process started (`>&-`). A
    /// descriptor the runtime opened since (close-on-exec, unlike anything inherited as stdout)
    /// counts as closed: writing events into it would corrupt it.
    package static func checkOpen() throws {
        let flags = fcntl(1, F_GETFD)
        if flags < 0 || flags & FD_CLOEXEC != 0 { throw OutputError(errno: EBADF) }
    }
}

/// A failed write to the events' output, with the system's reason.
package struct OutputError: Error, CustomStringConvertible, Equatable {
    package var errno: Int32

    package init(errno: Int32) { self.errno = errno }

    /// The errno's symbol, e.g. EPIPE.
    package var name: String {
        switch errno {
        case EPIPE: "EPIPE"
        case ENOSPC: "ENOSPC"
        case EBADF: "EBADF"
        case EIO: "EIO"
        case EINVAL: "EINVAL"
        case EFBIG: "EFBIG"
        case EDQUOT: "EDQUOT"
        case ECONNRESET: "ECONNRESET"
        default: "errno \(errno)"
        }
    }

    package var description: String {
        switch errno {
        case EBADF: "stdout is closed (EBADF)"
        case EPIPE: "the reader of stdout went away (EPIPE: \(String(cString: strerror(errno))))"
        default: "\(String(cString: strerror(errno))) (\(name))"
        }
    }
}

/// Keeps lines in memory: for tests and for comparing streams.
package final class CollectedEvents: EventOutput {
    private let storage = Mutex<[String]>([])
    package init() {}
    package func write(line: String) throws { storage.withLock { $0.append(line) } }
    package var lines: [String] { storage.withLock { $0 } }
}
