import Synchronization

/// A single-consumer queue of byte chunks that bridges a producer (a reader thread, an
/// in-process device) into async code. Memory is bounded by `limit` unread bytes: a producer that
/// outruns the consumer that far is a broken device, and the queue fails instead of growing.
///
/// A read takes every chunk waiting, like `read(2)` on a stream: a consumer that fell behind
/// catches up in one wake-up, and the UCI host hands on what it decoded as one batch.
public final class ByteQueue: Sendable {
    private struct State {
        var chunks: [[UInt8]] = []
        var bufferedBytes = 0
        var finished = false
        var failure: TransportError?
        var waiter: CheckedContinuation<[[UInt8]]?, any Error>?
    }
    private let state = Mutex(State())
    public let limit: Int

    public init(limit: Int = 4 << 20) {
        self.limit = limit
    }

    /// Adds bytes; returns false when the queue is finished or over its limit (then it fails).
    @discardableResult
    public func push(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        let (waiter, accepted): (CheckedContinuation<[[UInt8]]?, any Error>?, Bool) = state.withLock { s in
            guard !s.finished else { return (nil, false) }
            if let waiter = s.waiter {
                s.waiter = nil
                return (waiter, true)
            }
            guard s.bufferedBytes + bytes.count <= limit else {
                s.finished = true
                s.failure = .system(call: "queue", errno: 0, message: "device sent more than \(limit) unread bytes")
                s.chunks = []
                return (nil, false)
            }
            s.chunks.append(bytes)
            s.bufferedBytes += bytes.count
            return (nil, true)
        }
        waiter?.resume(returning: [bytes])
        return accepted
    }

    /// Ends the stream after the buffered chunks; with `failure`, the consumer sees that error instead.
    public func finish(failure: TransportError? = nil) {
        let waiter: CheckedContinuation<[[UInt8]]?, any Error>? = state.withLock { s in
            guard !s.finished else { return nil }
            s.finished = true
            s.failure = failure
            defer { s.waiter = nil }
            return s.waiter
        }
        if let failure { waiter?.resume(throwing: failure) } else { waiter?.resume(returning: nil) }
    }

    /// Every byte waiting, once there is some; nil once finished.
    public func next() async throws -> [UInt8]? {
        try await nextChunks().map(Self.concatenated)
    }

    /// One array of `chunks`, copied once (a flattened sequence copies element by element).
    public static func concatenated(_ chunks: [[UInt8]]) -> [UInt8] {
        guard chunks.count > 1 else { return chunks.first ?? [] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks { bytes += chunk }
        return bytes
    }

    /// Every chunk waiting, in order, once there is one; nil once finished. For consumers that
    /// account per chunk (the simulation's work tracking).
    public func nextChunks() async throws -> [[UInt8]]? {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<[[UInt8]]?, any Error>? = state.withLock { s in
                if !s.chunks.isEmpty {
                    defer {
                        s.chunks = []
                        s.bufferedBytes = 0
                    }
                    return .success(s.chunks)
                }
                if s.finished {
                    if let failure = s.failure { return .failure(failure) }
                    return .success(nil)
                }
                precondition(s.waiter == nil, "ByteQueue has a single consumer")
                s.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
