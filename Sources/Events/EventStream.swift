import Synchronization
import SystemPackage

/// Where finished lines go. Each call receives exactly one complete line.
public protocol EventOutput: Sendable {
    func write(line: String) throws
}

/// The single per-process event stream: stamps `seq` and `ts`, renders, and writes each line whole.
///
/// Writes happen under one lock so lines from concurrent peers never interleave, and each line is
/// handed to the output in one piece (the stdout output loops until every byte is written).
public final class EventStream: Sendable {
    private struct State {
        var nextSeq: UInt64 = 1
        var failed = false
    }
    private let state = Mutex(State())
    private let output: any EventOutput
    /// `range` events are high-volume; they are written only when asked for (`--ranges`).
    public let includesRanges: Bool
    private let onFailure: @Sendable (any Error) -> Void

    public init(
        output: any EventOutput, includesRanges: Bool,
        onFailure: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.output = output
        self.includesRanges = includesRanges
        self.onFailure = onFailure
    }

    /// Writes `event` observed at `timestampMilliseconds` (Unix epoch, UTC).
    public func emit(_ event: Event, timestampMilliseconds: Int64) {
        if case .range = event.body, !includesRanges { return }
        let failure: (any Error)? = state.withLock { state in
            guard !state.failed else { return nil }
            let line = JSONLine.render(event, seq: state.nextSeq, timestampMilliseconds: timestampMilliseconds)
            do {
                try output.write(line: line)
                state.nextSeq += 1
                return nil
            } catch {
                state.failed = true
                return error
            }
        }
        if let failure { onFailure(failure) }
    }
}

/// Writes lines to file descriptor 1. A full pipe blocks the writer rather than dropping or
/// truncating a line; a closed pipe (EPIPE) is reported once through `EventStream`'s failure handler.
public struct StandardOutputEvents: EventOutput {
    public init() {}
    public func write(line: String) throws {
        var bytes = Array(line.utf8)
        _ = try bytes.withUnsafeMutableBytes { buffer in
            try FileDescriptor.standardOutput.writeAll(UnsafeRawBufferPointer(buffer))
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
