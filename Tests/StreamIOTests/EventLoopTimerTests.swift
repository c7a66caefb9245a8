import Glibc
import StreamIO
import Synchronization
import SystemPackage
import Testing

/// What ran, in order, and on which thread.
private final class Log: Sendable {
    private let entries = Mutex<[String]>([])
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

@Suite(.timeLimit(.minutes(1))) struct EventLoopTimerTests {
    /// Timers run on the loop's thread, in deadline order, whatever order they were scheduled in.
    /// They are scheduled from a job on the loop, so none can run before all three are in, however
    /// long a loaded machine holds this thread up between two of them.
    @Test func timersRunOnTheLoopThreadInDeadlineOrder() async {
        let loop = EventLoop(name: "test-timer-a")
        let log = Log()
        let last = ReplySlot<Void, Never>()
        await Task(executorPreference: loop) {
            let now = ContinuousClock.now
            loop.schedule(at: now + .milliseconds(30)) {
                log.add("30 \(IOThread.currentName() ?? "?")")
                last.resume(with: .success(()))
            }
            loop.schedule(at: now + .milliseconds(10)) { log.add("10 \(IOThread.currentName() ?? "?")") }
            loop.schedule(at: now + .milliseconds(20)) { log.add("20 \(IOThread.currentName() ?? "?")") }
        }.value
        await last.result.get()
        #expect(log.all == ["10 test-timer-a", "20 test-timer-a", "30 test-timer-a"])
    }

    /// A cancelled timer never runs; cancelling one that ran says so. (Scheduled and cancelled in
    /// one job on the loop: a thread held up past 10 ms between the two would otherwise see the
    /// timer run first.)
    @Test func aCancelledTimerNeverRuns() async {
        let loop = EventLoop(name: "test-timer-b")
        let log = Log()
        let later = ReplySlot<Void, Never>()
        let (cancelled, ran, cancelling) = await Task(executorPreference: loop) {
            let now = ContinuousClock.now
            let cancelled = loop.schedule(at: now + .milliseconds(10)) { log.add("cancelled") }
            let ran = loop.schedule(at: now + .milliseconds(5)) { log.add("ran") }
            loop.schedule(at: now + .milliseconds(20)) { later.resume(with: .success(())) }
            return (cancelled, ran, loop.cancel(cancelled))
        }.value
        #expect(cancelling)
        await later.result.get()
        #expect(log.all == ["ran"])
        #expect(!loop.cancel(ran))
        #expect(!loop.cancel(cancelled))
    }

    /// A loop asleep until a far deadline is woken by an earlier timer scheduled from another
    /// thread (without the wake-up this test would wait an hour).
    @Test func anEarlierTimerWakesALoopAsleepUntilALaterOne() async {
        let loop = EventLoop(name: "test-timer-c")
        let far = loop.schedule(at: .now + .seconds(3600)) {}
        // A job on the loop makes sure it went back to sleep with the far deadline.
        await Task(executorPreference: loop) {}.value
        let soon = ReplySlot<String?, Never>()
        loop.schedule(at: .now + .milliseconds(1)) { soon.resume(with: .success(IOThread.currentName())) }
        #expect(await soon.result.get() == "test-timer-c")
        #expect(loop.cancel(far))
    }

    /// Shut down: the jobs queued run, the watches end, timers not yet due never run, the thread
    /// ends; a task that prefers the loop afterwards still runs (on Swift's global pool), a new
    /// watch ends at once, a new timer never runs.
    @Test func shutdownEndsTheThreadAndStrandsNothing() async throws {
        let loop = EventLoop(name: "test-timer-d")
        let log = Log()
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { Glibc.close(pair[0]); Glibc.close(pair[1]) }
        var never: [Int32] = [0, 0]  // an end signal never signalled: a pipe nobody writes
        try #require(pipe(&never) == 0)
        defer { Glibc.close(never[0]); Glibc.close(never[1]) }
        let endSignal = never[0]
        loop.watch(pair[0], endSignal: endSignal, readable: { .keep }, ended: { log.add("watch ended") })
        loop.schedule(at: .now + .seconds(3600)) { log.add("timer ran") }
        // A task on the loop asks for the shutdown, then queues more work on the loop: it runs.
        let queued = await Task(executorPreference: loop) { () -> String in
            loop.shutdown()
            let child = Task(executorPreference: loop) { IOThread.currentName() ?? "?" }
            return await child.value
        }.value
        await loop.waitUntilEnded()
        #expect(queued == "test-timer-d")
        #expect(log.all == ["watch ended"])

        let after = await Task(executorPreference: loop) { IOThread.currentName() ?? "?" }.value
        #expect(after != "test-timer-d")
        loop.watch(pair[1], endSignal: endSignal, readable: { .keep }, ended: { log.add("late watch ended") })
        let late = loop.schedule(at: .now) { log.add("late timer ran") }
        #expect(!loop.cancel(late))
        #expect(log.all == ["watch ended", "late watch ended"])
    }
}
