import Glibc
import Synchronization
import Testing

@testable import StreamIO

/// `ByteQueue.deliver(to:)`: a consumer that takes bytes on the producer's thread sees the whole
/// stream in order (what was queued before it asked, then every push), one call at a time, and
/// the end of the stream exactly once.
@Suite struct ByteQueueDeliveryTests {
    /// What a receiver saw, and whether two of its calls ever overlapped.
    final class Seen: Sendable {
        private let state = Mutex<(bytes: [UInt8], ends: [String], inside: Int, overlapped: Bool)>(([], [], 0, false))

        func receive(_ result: Result<UnsafeRawBufferPointer?, TransportError>) {
            state.withLock { s in
                s.inside += 1
                if s.inside > 1 { s.overlapped = true }
            }
            // Long enough for a racing push to arrive while this call is still running.
            for _ in 0..<200 { sched_yield() }
            state.withLock { s in
                switch result {
                case .success(let bytes?): s.bytes += Array(bytes)
                case .success(nil): s.ends.append("end")
                case .failure(let error): s.ends.append("\(error)")
                }
                s.inside -= 1
            }
        }

        var bytes: [UInt8] { state.withLock { $0.bytes } }
        var ends: [String] { state.withLock { $0.ends } }
        var overlapped: Bool { state.withLock { $0.overlapped } }
    }

    @Test func queuedBytesComeFirstThenPushesThenTheEndOnce() {
        let queue = ByteQueue()
        queue.push([1, 2])
        queue.push([3])
        let seen = Seen()
        queue.deliver(to: seen.receive)
        #expect(seen.bytes == [1, 2, 3])
        queue.push([4, 5])
        queue.finish()
        queue.finish()
        #expect(seen.bytes == [1, 2, 3, 4, 5])
        #expect(seen.ends == ["end"])
        #expect(!queue.push([6]), "a finished queue refuses bytes")
    }

    @Test func aStreamThatEndedBeforeTheConsumerAskedIsDeliveredWithItsFailure() {
        let queue = ByteQueue()
        queue.push([9])
        queue.finish(failure: .closed)
        let seen = Seen()
        queue.deliver(to: seen.receive)
        #expect(seen.bytes == [9])
        #expect(seen.ends == ["\(TransportError.closed)"])
    }

    /// A reader pushes from one buffer it reuses for every read: a queue without a delivering
    /// consumer keeps its own copy, so the next read cannot change bytes already queued.
    @Test func borrowedBytesAreCopiedWhenQueuedAndLentWhenDelivered() async throws {
        let queue = ByteQueue()
        var buffer: [UInt8] = [1, 2, 3]
        buffer.withUnsafeBytes { #expect(queue.push(borrowing: $0)) }
        buffer = [7, 7, 7]
        #expect(try await queue.next() == [1, 2, 3])

        let seen = Seen()
        queue.deliver(to: seen.receive)
        buffer = [4, 5]
        buffer.withUnsafeBytes { #expect(queue.push(borrowing: $0)) }
        buffer = [0, 0]
        #expect(seen.bytes == [4, 5])
    }

    /// A producer thread pushes a counting sequence while the consumer switches to delivery: no
    /// byte is lost, none is reordered, and no two receiver calls overlap.
    @Test func switchingToDeliveryWhileAProducerPushesKeepsOrder() async throws {
        let queue = ByteQueue()
        let seen = Seen()
        let count = 3_000
        for value in 0..<100 { queue.push([UInt8(value)]) }
        let done = Atomic<Bool>(false)
        IOThread.detach(name: "test-producer") {
            for value in 100..<count { queue.push([UInt8(truncatingIfNeeded: value)]) }
            done.store(true, ordering: .releasing)
        }
        queue.deliver(to: seen.receive)
        while !done.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
        queue.finish()
        #expect(seen.bytes == (0..<count).map { UInt8(truncatingIfNeeded: $0) })
        #expect(seen.ends == ["end"])
        #expect(!seen.overlapped)
    }
}
