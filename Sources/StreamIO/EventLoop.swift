import CLinux
import Glibc
import Synchronization

/// One thread that waits for descriptors to become readable and runs Swift jobs: a task
/// executor that does its own I/O, in the manner of an event loop.
///
/// Why: a range notification handed from a reader thread to an async task costs a thread wake-up
/// (a futex and a context switch) on each hand-off, and on a Raspberry Pi those wake-ups cost far
/// more than decoding and filtering the notification. Actors whose executor is this loop, and
/// streams it watches, take a notification from `read` to the event line's `write` on one
/// thread: the one wake-up is the kernel's, for the readable descriptor.
///
/// Jobs enqueued from the loop's own thread run after the current one without any system call;
/// from another thread they write an eventfd only when the loop is asleep in `epoll_wait`. It is a
/// task executor (`Task(executorPreference:)`), not an actor's serial executor: jobs run with no
/// serial executor of their own, so a task on the loop enters the default actors it calls
/// right there on the thread, instead of enqueuing a job for each actor hop.
///
/// Timers (`schedule`) are the `epoll_wait` timeout, on the monotonic `ContinuousClock`: no
/// thread, Dispatch source or task of their own, and a cancelled one costs nothing.
///
/// `shutdown` ends the thread. What is queued then still runs, every watch ends (its `ended`
/// runs), timers not yet due never run; jobs that arrive after the thread ended run on Swift's
/// global executor, as they would without a loop, so no task on it is ever stranded.
package final class EventLoop: TaskExecutor, Sendable {
    /// What a watched descriptor's handler asks for after running.
    package enum Watch: Sendable {
        case keep
        /// Stop watching: the loop forgets the descriptor and runs the watch's `ended`.
        case end
    }

    private struct Source {
        var fd: Int32
        /// An eventfd that ends the watch when signalled (a `ClosableDescriptor`'s close).
        var endSignal: Int32
        var readable: @Sendable () -> Watch
        var ended: @Sendable () -> Void
    }

    /// A scheduled closure, cancelled through its `Timer`.
    package struct Timer: Hashable, Sendable {
        fileprivate let id: Int
    }

    private struct ScheduledTimer {
        var deadline: ContinuousClock.Instant
        var id: Int
        var body: @Sendable () -> Void
    }

    private struct State {
        var jobs: [UnownedJob] = []
        var sources: [Int: Source] = [:]
        var nextSource = 0
        /// Earliest first: a loop has a few at a time (its owners' command deadlines), so a
        /// sorted array beats a heap.
        var timers: [ScheduledTimer] = []
        var nextTimer = 0
        /// The loop is in (or about to enter) `epoll_wait`: work from other threads must wake it.
        var sleeping = false
        /// The deadline that wait ends at (nil: none); an earlier timer must wake it.
        var sleepingUntil: ContinuousClock.Instant?
        var stopping = false
        /// The thread has ended: jobs go to the global executor.
        var ended = false
    }

    private let state = Mutex(State())
    private let finished = WaiterList(false) { $0 }
    private let wake: Int32
    /// Watched descriptors stay registered between waits (one `epoll_wait` per wake-up, no poll
    /// set to build and tear down each time); an event's data is the watch's id times two, plus
    /// one for its end signal.
    private let epoll: Int32
    private static let wakeID = UInt64.max
    package let name: String

    /// Starts the loop's thread, named `name`.
    package init(name: String) {
        self.name = name
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        precondition(wake >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epoll >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
        precondition(Self.register(wake, id: Self.wakeID, in: epoll), "epoll_ctl failed: \(String(cString: strerror(errno)))")
        IOThread.detach(name: name) { [self] in run() }
    }

    /// Closed only once the thread is gone and nobody holds the loop: another thread's late
    /// `enqueue` or `schedule` never writes to a closed (or reused) descriptor.
    deinit {
        Glibc.close(epoll)
        Glibc.close(wake)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (mustWake, ended) = state.withLock { s -> (Bool, Bool) in
            guard !s.ended else { return (false, true) }
            s.jobs.append(job)
            defer { s.sleeping = false }
            return (s.sleeping, false)
        }
        if ended { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        if mustWake { signal() }
    }

    /// Runs `body` on the loop's thread once `deadline` has passed, unless cancelled first.
    /// A loop that was shut down never runs it.
    @discardableResult
    package func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void) -> Timer {
        let (timer, mustWake) = state.withLock { s -> (Timer, Bool) in
            defer { s.nextTimer += 1 }
            let timer = Timer(id: s.nextTimer)
            guard !s.stopping else { return (timer, false) }
            let index = s.timers.firstIndex { $0.deadline > deadline } ?? s.timers.endIndex
            s.timers.insert(ScheduledTimer(deadline: deadline, id: timer.id, body: body), at: index)
            guard s.sleeping, s.sleepingUntil.map({ deadline < $0 }) ?? true else { return (timer, false) }
            s.sleeping = false
            return (timer, true)
        }
        if mustWake { signal() }
        return timer
    }

    /// Forgets `timer`; false if it ran already (or is running), was cancelled, or the loop shut down.
    @discardableResult
    package func cancel(_ timer: Timer) -> Bool {
        state.withLock { s in
            guard let index = s.timers.firstIndex(where: { $0.id == timer.id }) else { return false }
            s.timers.remove(at: index)
            return true
        }
    }

    /// Asks the thread to end (see the type's comment) and returns at once: safe from any
    /// thread, the loop's own included. `waitUntilEnded` waits for the end.
    package func shutdown() {
        let mustWake = state.withLock { s in
            s.stopping = true
            defer { s.sleeping = false }
            return s.sleeping
        }
        if mustWake { signal() }
    }

    /// Returns once the thread has ended, after `shutdown`.
    package func waitUntilEnded() async {
        await finished.wait()
    }

    package func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Calls `readable` on the loop's thread whenever `fd` has bytes (or has hung up) until it
    /// returns `.end` or `endSignal` is signalled; then calls `ended` once. The descriptors stay
    /// the caller's: the loop never closes them. A descriptor epoll cannot watch (a regular file)
    /// ends at once.
    package func watch(
        _ fd: Int32, endSignal: Int32, readable: @escaping @Sendable () -> Watch, ended: @escaping @Sendable () -> Void
    ) {
        let id = state.withLock { s -> Int? in
            guard !s.stopping else { return nil }
            defer { s.nextSource += 1 }
            s.sources[s.nextSource] = Source(fd: fd, endSignal: endSignal, readable: readable, ended: ended)
            return s.nextSource
        }
        guard let id else { return ended() }
        guard Self.register(fd, id: UInt64(id) << 1, in: epoll), Self.register(endSignal, id: UInt64(id) << 1 | 1, in: epoll) else {
            unregister(id)
            ended()
            return
        }
    }

    private static func register(_ fd: Int32, id: UInt64, in epoll: Int32) -> Bool {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = id
        return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0
    }

    /// Forgets watch `id`; returns it if it was still watched.
    @discardableResult
    private func unregister(_ id: Int) -> Source? {
        guard let source = state.withLock({ $0.sources.removeValue(forKey: id) }) else { return nil }
        epoll_ctl(epoll, EPOLL_CTL_DEL, source.fd, nil)
        epoll_ctl(epoll, EPOLL_CTL_DEL, source.endSignal, nil)
        return source
    }

    private func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, MemoryLayout<UInt64>.size)
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        // Two job buffers swapped under the lock, so a batch costs no allocation.
        var jobs: [UnownedJob] = []
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var ready = ReadyWatches()
        while true {
            jobs.removeAll(keepingCapacity: true)
            let next = state.withLock { s -> Next in
                swap(&s.jobs, &jobs)
                guard jobs.isEmpty else { return .run }
                if s.stopping {
                    guard s.sources.isEmpty, s.timers.isEmpty else { return .endWatches }
                    s.ended = true
                    return .end
                }
                s.sleeping = true
                s.sleepingUntil = s.timers.first?.deadline
                return .wait(until: s.sleepingUntil)
            }
            switch next {
            case .run:
                for job in jobs { job.runSynchronously(on: executor) }
            case .wait(let deadline):
                wait(until: deadline, into: &events, &ready)
            case .endWatches:
                endEverything()
                continue
            case .end:
                finished.update { $0 = true }
                return
            }
            runDueTimers()
        }
    }

    private enum Next {
        case run
        case wait(until: ContinuousClock.Instant?)
        case endWatches
        case end
    }

    /// Shutting down: every watch ends (its handlers may still queue jobs, which run before the
    /// thread ends) and the timers are dropped.
    private func endEverything() {
        let ids = state.withLock { s in
            s.timers = []
            return Array(s.sources.keys)
        }
        for id in ids { unregister(id)?.ended() }
    }

    /// Runs, in deadline order, the timers whose deadline has passed.
    private func runDueTimers() {
        let due = state.withLock { s -> [ScheduledTimer] in
            guard let first = s.timers.first, !s.stopping else { return [] }
            let now = ContinuousClock.now
            guard first.deadline <= now else { return [] }
            let count = s.timers.firstIndex { $0.deadline > now } ?? s.timers.endIndex
            defer { s.timers.removeFirst(count) }
            return Array(s.timers[0..<count])
        }
        for timer in due { timer.body() }
    }

    /// The watches one wake-up found readable or ending: kept across wake-ups, so a wake-up
    /// allocates nothing.
    private struct ReadyWatches {
        var readable: [Int] = []
        var ending: [Int] = []
    }

    /// Waits for a watched descriptor, an end signal or the loop's own wake-up, and handles what
    /// is ready. Another thread's job arriving meanwhile signals the wake-up; a new watch needs
    /// none, epoll reports it in the wait already under way.
    private func wait(until deadline: ContinuousClock.Instant?, into events: inout [epoll_event], _ watches: inout ReadyWatches) {
        let ready = epoll_wait(epoll, &events, Int32(events.count), deadline.map(Self.milliseconds(until:)) ?? -1)
        // Awake: jobs the handlers below enqueue need no wake-up.
        state.withLock { $0.sleeping = false }
        guard ready > 0 else { return }
        // A watch whose end signal fired ends without reading; one with data runs its handler.
        watches.readable.removeAll(keepingCapacity: true)
        watches.ending.removeAll(keepingCapacity: true)
        for event in events[0..<Int(ready)] {
            let data = event.data.u64
            if data == Self.wakeID {
                var value: UInt64 = 0
                _ = Glibc.read(wake, &value, MemoryLayout<UInt64>.size)
            } else if data & 1 == 1 {
                watches.ending.append(Int(data >> 1))
            } else {
                watches.readable.append(Int(data >> 1))
            }
        }
        for id in watches.readable where !watches.ending.contains(id) {
            guard let source = state.withLock({ $0.sources[id] }) else { continue }
            if source.readable() == .end { watches.ending.append(id) }
        }
        for id in watches.ending {
            unregister(id)?.ended()
        }
    }

    /// `epoll_wait`'s timeout for `deadline`, rounded up: a timer never runs early.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        guard seconds < Int64(Int32.max / 1000) - 1 else { return Int32.max }
        return Int32(seconds) * 1000 + Int32((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
