import Glibc
import Synchronization
import SystemPackage

/// Where finished lines go. Each `write(line:)` receives exactly one complete line.
public protocol EventOutput: Sendable {
    func write(line: String) throws
    /// Several complete lines at once, in order; outputs that can write them in one call do.
    func write(lines: [String]) throws
    /// Whether a write of up to `PIPE_BUF` bytes would return without waiting for a reader. When
    /// it would, the buffered stream writes on the emitting thread instead of waking its writer
    /// thread. Outputs that cannot tell say false (the default).
    func isWritableWithoutWaiting() -> Bool
}

extension EventOutput {
    public func write(lines: [String]) throws {
        for line in lines { try write(line: line) }
    }

    public func isWritableWithoutWaiting() -> Bool { false }
}

/// How the stream's output ended up when it was drained.
public struct DrainResult: Sendable {
    /// Lines that were emitted (or refused) but never written: lost to a failed output, or
    /// still waiting when the stop deadline passed.
    public var unwritten: Int
    /// The output's first failure, if it failed.
    public var failure: (any Error)?

    public init(unwritten: Int = 0, failure: (any Error)? = nil) {
        self.unwritten = unwritten
        self.failure = failure
    }
}

/// The single per-process event stream: stamps `seq` and `ts`, renders, and writes each line whole.
///
/// Lines are stamped and rendered under one lock, so lines from concurrent peers never
/// interleave and `seq` follows the order of the lines. Unbuffered, the line is written under
/// that lock too: a slow output slows the emitter, which tests and captures want (nothing is ever
/// dropped). Buffered (the CLI on stdout), a writer thread drains a bounded queue so the radios
/// never wait for stdout; when the queue passes its soft limit, `range` events are shed (counted
/// per node, for the `stats` event) and every other event still goes in, up to a hard limit at
/// which the emitter waits: near/far/bump/peer events are never dropped. Once the process is
/// stopping (`stopWaiting(within:)`), nothing waits for the output any more.
///
/// A failed write (EPIPE, ENOSPC, EBADF...) ends the output: `onFailure` is called exactly once,
/// with the error, and no line is written after it; `drain()` reports it and counts what was lost.
public final class EventStream: Sendable {
    private struct State {
        var nextSeq: UInt64 = 1
        /// Unbuffered: the output's failure, and the lines lost to it.
        var failure: (any Error)?
        var unwritten = 0
        /// Range events shed since the node last asked, by node.
        var shed: [String: Int] = [:]
    }
    private let state = Mutex(State())
    private let output: any EventOutput
    private let buffer: LineBuffer?
    /// `range` events are high-volume; they are written only when asked for (`--ranges`).
    public let includesRanges: Bool
    private let onFailure: @Sendable (any Error) -> Void

    /// - Parameter bufferedLines: when set, lines go through a queue of this many lines (soft
    ///   limit) drained by a writer thread; nil writes each line before `emit` returns.
    public init(
        output: any EventOutput, includesRanges: Bool, bufferedLines: Int? = nil,
        onFailure: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.output = output
        self.includesRanges = includesRanges
        self.onFailure = onFailure
        self.buffer = bufferedLines.map { LineBuffer(softLimit: $0, output: output, onFailure: onFailure) }
    }

    /// Writes `event` observed at `timestampMilliseconds` (Unix epoch, UTC).
    public func emit(_ event: Event, timestampMilliseconds: Int64) {
        emit([event], timestampMilliseconds: timestampMilliseconds)
    }

    /// Writes `events`, in order, observed at `timestampMilliseconds`: one lock and, buffered, one
    /// hand-off to the writer for all of them (a peer's ranging rounds from one radio read).
    public func emit(_ events: [Event], timestampMilliseconds: Int64) {
        let events = includesRanges ? events : events.filter { if case .range = $0.body { false } else { true } }
        guard !events.isEmpty else { return }
        if let buffer {
            let failure: (any Error)? = state.withLock { state in
                var lines: [String] = []
                lines.reserveCapacity(events.count)
                var seq = state.nextSeq
                let pastSoftLimit = buffer.isPastSoftLimit
                for event in events {
                    if event.isSheddable, pastSoftLimit {
                        state.shed[event.node, default: 0] += 1
                        continue
                    }
                    lines.append(JSONLine.render(event, seq: seq, timestampMilliseconds: timestampMilliseconds))
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
                return JSONLine.render(event, seq: seq, timestampMilliseconds: timestampMilliseconds)
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

    /// How many of `node`'s range events were shed since the last call, and starts counting again.
    public func takeShedRanges(node: String) -> Int {
        state.withLock { $0.shed.removeValue(forKey: node) ?? 0 }
    }

    /// Lines waiting for the output (0 when unbuffered).
    public var queuedLines: Int { buffer?.count ?? 0 }

    /// Returns once every line emitted so far has been written, the output failed, or (after
    /// `stopWaiting(within:)`) its deadline passed, and says what was not written. Call it before
    /// the process exits.
    @discardableResult
    public func drain() -> DrainResult {
        if let buffer {
            let drained = buffer.drain()
            return DrainResult(unwritten: drained.unwritten, failure: drained.failure)
        }
        return state.withLock { DrainResult(unwritten: $0.unwritten, failure: $0.failure) }
    }

    /// The process is stopping: from now on emitters never wait for a slow output (lines that
    /// would are dropped and counted as unwritten), and `drain()` returns within `timeout` of
    /// this call. Calling it again never extends an earlier deadline.
    public func stopWaiting(within timeout: Duration) {
        guard let buffer else { return }
        let (seconds, attoseconds) = timeout.components
        var deadline = LineBuffer.now()
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        buffer.stopWaiting(until: deadline)
    }
}

/// Writes lines to file descriptor 1 (or another one). A full pipe blocks the writer rather than
/// dropping or truncating a line; a failed write (a closed pipe, a full disk) throws
/// `OutputError`, which `EventStream` reports once through its failure handler.
public struct StandardOutputEvents: EventOutput {
    private let fd: FileDescriptor

    public init(fileDescriptor: Int32 = 1) {
        fd = FileDescriptor(rawValue: fileDescriptor)
    }

    public func write(line: String) throws {
        try write(lines: [line])
    }

    /// Writes all lines with one system call where the output takes them whole.
    public func write(lines: [String]) throws {
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
    public func isWritableWithoutWaiting() -> Bool {
        var request = pollfd(fd: fd.rawValue, events: Int16(POLLOUT), revents: 0)
        return poll(&request, 1, 0) == 1 && request.revents & Int16(POLLOUT) != 0
    }

    /// Throws when file descriptor 1 was not open when the process started (`>&-`). A
    /// descriptor the runtime opened since (close-on-exec, unlike anything inherited as stdout)
    /// counts as closed: writing events into it would corrupt it.
    public static func checkOpen() throws {
        let flags = fcntl(1, F_GETFD)
        if flags < 0 || flags & FD_CLOEXEC != 0 { throw OutputError(errno: EBADF) }
    }
}

/// A failed write to the events' output, with the system's reason.
public struct OutputError: Error, CustomStringConvertible, Equatable {
    public var errno: Int32

    public init(errno: Int32) { self.errno = errno }

    /// The errno's symbol, e.g. EPIPE.
    public var name: String {
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

    public var description: String {
        switch errno {
        case EBADF: "stdout is closed (EBADF)"
        case EPIPE: "the reader of stdout went away (EPIPE: \(String(cString: strerror(errno))))"
        default: "\(String(cString: strerror(errno))) (\(name))"
        }
    }
}

/// Keeps lines in memory: for tests and for comparing streams.
public final class CollectedEvents: EventOutput {
    private let storage = Mutex<[String]>([])
    public init() {}
    public func write(line: String) throws { storage.withLock { $0.append(line) } }
    public var lines: [String] { storage.withLock { $0 } }
}
