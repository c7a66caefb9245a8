import Synchronization
import SystemPackage

/// Where finished lines go. Each `write(line:)` receives exactly one complete line.
public protocol EventOutput: Sendable {
    func write(line: String) throws
    /// Several complete lines at once, in order; outputs that can write them in one call do.
    func write(lines: [String]) throws
}

extension EventOutput {
    public func write(lines: [String]) throws {
        for line in lines { try write(line: line) }
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
/// which the emitter waits: near/far/bump/peer events are never dropped.
public final class EventStream: Sendable {
    private struct State {
        var nextSeq: UInt64 = 1
        var failed = false
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
            state.withLock { state in
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
                if !lines.isEmpty, buffer.push(lines) { state.nextSeq = seq }
            }
            return
        }
        let failure: (any Error)? = state.withLock { state in
            guard !state.failed else { return nil }
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
                state.failed = true
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

    /// Returns once every line emitted so far has been written (or the output failed). Call it
    /// before the process exits.
    public func drain() {
        buffer?.drain()
    }
}

/// Writes lines to file descriptor 1. A full pipe blocks the writer rather than dropping or
/// truncating a line; a closed pipe (EPIPE) is reported once through `EventStream`'s failure handler.
public struct StandardOutputEvents: EventOutput {
    public init() {}
    public func write(line: String) throws {
        try write(lines: [line])
    }

    /// Writes all lines with as few system calls as the pipe allows.
    public func write(lines: [String]) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count })
        for line in lines { bytes.append(contentsOf: line.utf8) }
        _ = try bytes.withUnsafeBytes { try FileDescriptor.standardOutput.writeAll($0) }
    }
}

/// Keeps lines in memory: for tests and for comparing streams.
public final class CollectedEvents: EventOutput {
    private let storage = Mutex<[String]>([])
    public init() {}
    public func write(line: String) throws { storage.withLock { $0.append(line) } }
    public var lines: [String] { storage.withLock { $0 } }
}
