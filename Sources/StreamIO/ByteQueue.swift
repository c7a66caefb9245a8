import Synchronization

/// A single-consumer queue of byte chunks that bridges a producer (a reader thread, an
/// in-process device) into async code. Memory is bounded by `limit` unread bytes: a producer that
/// outruns the consumer that far is a broken device, and the queue fails instead of growing.
///
/// A read takes every chunk waiting, like `read(2)` on a stream: a consumer that fell behind
/// catches up in one wake-up, and the UCI host hands on what it decoded as one batch.
///
/// A consumer that can take bytes on the producer's thread asks for them with `deliver(to:)`
/// instead: each push then calls it directly, with no task to resume, which on an `EventLoop`
/// takes a notification from `read(2)` to its handling without a single job hop.
package final class ByteQueue: Sendable {
    /// What a delivering queue hands its consumer: bytes, then once the end of the stream (nil)
    /// or why it failed. The bytes are borrowed for the call only (the producer's read buffer,
    /// reused for the next read): a consumer that keeps them copies them.
    package typealias Receiver = @Sendable (Result<UnsafeRawBufferPointer?, TransportError>) -> Void

    private struct State {
        var chunks: [[UInt8]] = []
        var bufferedBytes = 0
        var finished = false
        var failure: TransportError?
        var waiter: CheckedContinuation<[[UInt8]]?, any Error>?
        var receiver: Receiver?
    }
    private let state = Mutex(State())
    package let limit: Int

    package init(limit: Int = 4 << 20) {
        self.limit = limit
    }

    /// Adds bytes; returns false when the queue is finished or over its limit (then it fails).
    @discardableResult
    package func push(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { push(borrowing: $0, owned: bytes) }
    }

    /// Adds bytes borrowed for the call (a reader's buffer): a delivering consumer reads them in
    /// place, so a read costs no allocation; otherwise they are copied into the queue.
    @discardableResult
    package func push(borrowing bytes: UnsafeRawBufferPointer) -> Bool {
        push(borrowing: bytes, owned: nil)
    }

    private func push(borrowing bytes: UnsafeRawBufferPointer, owned: [UInt8]?) -> Bool {
        guard !bytes.isEmpty else { return true }
        enum Taker {
            case receiver(Receiver)
            case waiter(CheckedContinuation<[[UInt8]]?, any Error>)
        }
        let (taker, accepted): (Taker?, Bool) = state.withLock { s in
            guard !s.finished else { return (nil, false) }
            if let receiver = s.receiver { return (.receiver(receiver), true) }
            if let waiter = s.waiter {
                s.waiter = nil
                return (.waiter(waiter), true)
            }
            guard s.bufferedBytes + bytes.count <= limit else {
                s.finished = true
                s.failure = .system(call: "queue", errno: 0, message: "device sent more than \(limit) unread bytes")
                s.chunks = []
                return (nil, false)
            }
            s.chunks.append(owned ?? Array(bytes))
            s.bufferedBytes += bytes.count
            return (nil, true)
        }
        switch taker {
        case .receiver(let receive): receive(.success(bytes))
        case .waiter(let waiter): waiter.resume(returning: [owned ?? Array(bytes)])
        case nil: break
        }
        return accepted
    }

    /// Ends the stream after the buffered chunks; with `failure`, the consumer sees that error instead.
    package func finish(failure: TransportError? = nil) {
        let (waiter, receiver): (CheckedContinuation<[[UInt8]]?, any Error>?, Receiver?) = state.withLock { s in
            guard !s.finished else { return (nil, nil) }
            s.finished = true
            s.failure = failure
            defer { s.waiter = nil }
            return (s.waiter, s.receiver)
        }
        if let failure { waiter?.resume(throwing: failure) } else { waiter?.resume(returning: nil) }
        receiver?(failure.map { .failure($0) } ?? .success(nil))
    }

    /// From now on hands every chunk to `receive` on the pushing thread, starting with those
    /// already queued, then the end of the stream once; `next` is not to be called any more.
    /// Calls never overlap: `receive` sees the stream in order, one chunk at a time.
    package func deliver(to receive: @escaping Receiver) {
        while true {
            let (queued, end): ([[UInt8]], Result<UnsafeRawBufferPointer?, TransportError>?) = state.withLock { s in
                precondition(s.waiter == nil && s.receiver == nil, "ByteQueue has a single consumer")
                let queued = s.chunks
                s.chunks = []
                s.bufferedBytes = 0
                // Pushes queue until everything queued before them is handed over.
                if !queued.isEmpty { return (queued, nil) }
                s.receiver = receive
                guard s.finished else { return ([], nil) }
                return ([], s.failure.map { .failure($0) } ?? .success(nil))
            }
            for chunk in queued { chunk.withUnsafeBytes { receive(.success($0)) } }
            if queued.isEmpty {
                if let end { receive(end) }
                return
            }
        }
    }

    /// Every byte waiting, once there is some; nil once finished.
    package func next() async throws -> [UInt8]? {
        try await nextChunks().map(Self.concatenated)
    }

    /// One array of `chunks`, copied once (a flattened sequence copies element by element).
    package static func concatenated(_ chunks: [[UInt8]]) -> [UInt8] {
        guard chunks.count > 1 else { return chunks.first ?? [] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks { bytes += chunk }
        return bytes
    }

    /// Every chunk waiting, in order, once there is one; nil once finished. For consumers that
    /// account per chunk (the simulation's work tracking).
    package func nextChunks() async throws -> [[UInt8]]? {
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
