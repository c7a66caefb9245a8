import Benchmark
import Bridge
import Events
import Foundation
import Glibc
import MallocInterposerSwift
import StreamIO
import Synchronization

// MARK: Allocations per range notification, counted rather than timed

/// The `run` command's set-up (a whole `BridgeNode` whose `EventLoop` reads the board's socket,
/// decodes, runs the node and writes each line to /dev/null on the same thread), 100 peers, fed
/// one SESSION_INFO_NTF at a time: the next is sent once the previous one's line is written, so
/// every read holds one notification and every batch is one, as at a rig's real rate. Counts are
/// independent of the machine's load: the malloc interposer counts every allocation, and a hook
/// counts those of the node's loop thread (the one that writes the lines).
///
/// The figure is the difference between a window of N and one of 2N notifications, divided by
/// N: what one more notification costs, without the windows' fixed costs. Set-up timers (each UCI
/// command of the set-up arms a 2 s timeout) are left to expire before the windows, and 400
/// rounds per peer go first: a peer's proximity histories grow to their full size in its first
/// few hundred rounds (two allocations per peer), which is not the steady state.
func allocationBenchmark() {
    Benchmark(
        "node: allocations per range notification, 100 peers",
        configuration: .init(
            metrics: [
                .custom("loop thread, per 100 notifications", useScalingFactor: false),
                .custom("whole process, per 100 notifications", useScalingFactor: false),
            ],
            warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(300), maxIterations: 1)
    ) { benchmark in
        let environment = ProcessInfo.processInfo.environment
        let count = Int(environment["ALLOCATIONS_NOTIFICATIONS"] ?? "") ?? 10_000
        let warmup = Int(environment["ALLOCATIONS_WARMUP"] ?? "") ?? 40_000
        let lines = LineCounter()
        let stream = EventStream(output: CountingOutput(lines), includesRanges: true, bufferedLines: 4096)
        let harness = try await NodeHarness(
            events: stream, rangingSessions: 128, maxPeers: 1_024, overSocket: true, eventLoop: true)
        await harness.connectPeers(100)
        try await Task.sleep(for: .seconds(3))
        let notifications = Fixtures.notificationStream(peers: 100, rounds: (warmup + 3 * count) / 100 + 1)
        let result = await lockstep(notifications, device: harness.socketDevice!, lines: lines, warmup: warmup, count: count)
        await harness.stop()

        let loop = Double(result.loop.2 - result.loop.1) / Double(count)
        let process = Double(result.process.2 - result.process.1) / Double(count)
        benchmark.measurement(.custom("loop thread, per 100 notifications", useScalingFactor: false), Int((loop * 100).rounded()))
        benchmark.measurement(.custom("whole process, per 100 notifications", useScalingFactor: false), Int((process * 100).rounded()))
        print(
            String(
                format: "\nallocations per range notification (window of %d vs %d, after %d): loop thread %.2f, whole process %.2f"
                    + " (windows: loop %d and %d, process %d and %d; lines written off the loop thread: %d)\n",
                count, 2 * count, warmup, loop, process, result.loop.1, result.loop.2, result.process.1, result.process.2,
                lines.offThread))
    }
}

/// Counts (loop thread, whole process) in a window of `count` and one of `2 * count`, as
/// (0, first, second).
private struct WindowCounts: Sendable {
    var loop: (Int, Int, Int) = (0, 0, 0)
    var process: (Int, Int, Int) = (0, 0, 0)
}

/// The thread whose allocations the hook counts, and their count. Globals: the hook is a C
/// function, called inside malloc, and captures nothing.
private let countedThread = Atomic<UInt>(0)
private let countedAllocations = Atomic<Int>(0)
private let countOnThread: MallocInterposerSwift.AllocationHook = { _ in
    if pthread_self() == countedThread.load(ordering: .relaxed) { countedAllocations.add(1, ordering: .relaxed) }
}

/// Sends `warmup` notifications, then two windows of `count` and `2 * count`, each after the
/// previous one's line, from a thread of its own that allocates nothing meanwhile.
private func lockstep(_ notifications: [[UInt8]], device: SocketUWBS, lines: LineCounter, warmup: Int, count: Int) async -> WindowCounts {
    await withCheckedContinuation { (done: CheckedContinuation<WindowCounts, Never>) in
        IOThread.detach(name: "nb-lockstep") {
            lines.forgetWriter()
            let start = lines.count
            var next = 0
            func send(_ n: Int) {
                for _ in 0..<n {
                    device.send(notifications[next])
                    next += 1
                    lines.wait(for: start + next)
                }
            }
            send(warmup)
            // The loop thread is the one writing the lines (the event stream writes on the
            // emitting thread when /dev/null takes a write at once).
            countedThread.store(lines.writer, ordering: .relaxed)
            _ = countedAllocations.load(ordering: .relaxed)
            MallocInterposerSwift.initialize()
            MallocInterposerSwift.setAllocationHook(countOnThread)
            MallocInterposerSwift.hook()
            var counts = WindowCounts()
            func snapshot() -> (loop: Int, process: Int) {
                (countedAllocations.load(ordering: .relaxed), MallocInterposerSwift.getStatistics().mallocCount)
            }
            let s0 = snapshot()
            send(count)
            let s1 = snapshot()
            send(2 * count)
            let s2 = snapshot()
            MallocInterposerSwift.unhook()
            MallocInterposerSwift.setAllocationHook(nil)
            counts.loop = (0, s1.loop - s0.loop, s2.loop - s1.loop)
            counts.process = (0, s1.process - s0.process, s2.process - s1.process)
            done.resume(returning: counts)
        }
    }
}

/// Lines written so far, which thread wrote them, and a wait for a count, without allocating.
private final class LineCounter: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let written = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var lines = 0
    private var firstWriter: pthread_t = 0
    private var linesOffThread = 0

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(written, nil)
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    var count: Int { locked { lines } }
    /// The thread that wrote the first line since `forgetWriter`.
    var writer: pthread_t { locked { firstWriter } }

    /// Lines before now came from the set-up (the node's start, peers connecting), not the loop.
    func forgetWriter() {
        locked {
            firstWriter = 0
            linesOffThread = 0
        }
    }
    /// Lines written by another thread than the first writer.
    var offThread: Int { locked { linesOffThread } }

    func add(_ count: Int) {
        pthread_mutex_lock(mutex)
        if firstWriter == 0 { firstWriter = pthread_self() } else if firstWriter != pthread_self() { linesOffThread += count }
        lines += count
        pthread_cond_signal(written)
        pthread_mutex_unlock(mutex)
    }

    func wait(for target: Int) {
        pthread_mutex_lock(mutex)
        while lines < target { pthread_cond_wait(written, mutex) }
        pthread_mutex_unlock(mutex)
    }
}

/// /dev/null through the CLI's own stdout output, counting lines: no `String` of its own.
private final class CountingOutput: EventOutput {
    private let output = StandardOutput(fileDescriptor: open("/dev/null", O_WRONLY | O_CLOEXEC))
    private let lines: LineCounter

    init(_ lines: LineCounter) { self.lines = lines }

    func write(line: String) throws { try write(lines: [line]) }

    func write(lines batch: [String]) throws {
        try output.write(lines: batch)
        lines.add(batch.count)
    }

    func write(utf8 bytes: UnsafeRawBufferPointer, lineEnds: [Int]) throws {
        try output.write(utf8: bytes, lineEnds: lineEnds)
        lines.add(lineEnds.count)
    }

    func isWritableWithoutWaiting() -> Bool { output.isWritableWithoutWaiting() }
}
