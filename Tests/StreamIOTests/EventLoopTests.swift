import Glibc
import StreamIO
import Synchronization
import SystemPackage
import Testing

/// An actor without an executor of its own: it runs wherever the calling task prefers.
private actor Counter {
    var threads: [String] = []
    func record() { threads.append(IOThread.currentName() ?? "?") }
}

@Suite struct EventLoopTests {
    /// Jobs of a task that prefers the loop, and the default actors it calls, run on the loop's thread.
    @Test func tasksAndTheActorsTheyCallRunOnTheLoopThread() async {
        let loop = EventLoop(name: "test-loop-a")
        let counter = Counter()
        let names = await Task(executorPreference: loop) { () -> [String] in
            var names = [IOThread.currentName() ?? "?"]
            await counter.record()
            try? await Task.sleep(for: .milliseconds(5))  // resumed from the timer: still on the loop
            names.append(IOThread.currentName() ?? "?")
            return names
        }.value
        #expect(names == ["test-loop-a", "test-loop-a"])
        #expect(await counter.threads == ["test-loop-a"])
    }

    /// A stream the loop reads: the bytes reach a consumer on the same loop through the loop's
    /// own thread (no reader thread), in order; closing ends `read` with nil and closes the
    /// descriptor once.
    @Test func aStreamReadByTheLoopDeliversOnTheLoopThreadAndCloses() async throws {
        let loop = EventLoop(name: "test-loop-b")
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let connection = StreamConnection(fd: FileDescriptor(rawValue: pair[0]), description: "pair", loop: loop)
        let peer = pair[1]
        defer { Glibc.close(peer) }
        let received = Task(executorPreference: loop) { () -> ([UInt8], Set<String>) in
            var bytes: [UInt8] = []
            var threads: Set<String> = []
            while bytes.count < 300, let chunk = try? await connection.read() {
                bytes += chunk
                threads.insert(IOThread.currentName() ?? "?")
            }
            return (bytes, threads)
        }
        for start in stride(from: 0, to: 300, by: 100) {
            let chunk = (start..<(start + 100)).map { UInt8(truncatingIfNeeded: $0) }
            #expect(chunk.withUnsafeBytes { Glibc.write(peer, $0.baseAddress, $0.count) } == 100)
            try await Task.sleep(for: .milliseconds(2))
        }
        let (bytes, threads) = await received.value
        #expect(bytes == (0..<300).map { UInt8(truncatingIfNeeded: $0) })
        #expect(threads == ["test-loop-b"])

        connection.close()
        let end = try await connection.read()
        #expect(end == nil)
        // The peer sees the end of the stream: our end was shut down and closed.
        var byte: UInt8 = 0
        #expect(Glibc.read(peer, &byte, 1) == 0)
    }

    /// Another thread's job wakes a loop asleep in `poll`.
    @Test func aJobFromAnotherThreadWakesTheSleepingLoop() async {
        let loop = EventLoop(name: "test-loop-c")
        for _ in 0..<50 {
            let name = await Task(executorPreference: loop) { IOThread.currentName() }.value
            #expect(name == "test-loop-c")
        }
    }
}
