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

    private struct State {
        var jobs: [UnownedJob] = []
        var sources: [Int: Source] = [:]
        var nextSource = 0
        /// The loop is in (or about to enter) `epoll_wait`: work from other threads must wake it.
        var sleeping = false
    }

    private let state = Mutex(State())
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

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let mustWake = state.withLock { s in
            s.jobs.append(job)
            defer { s.sleeping = false }
            return s.sleeping
        }
        if mustWake { signal() }
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
        let id = state.withLock { s in
            defer { s.nextSource += 1 }
            s.sources[s.nextSource] = Source(fd: fd, endSignal: endSignal, readable: readable, ended: ended)
            return s.nextSource
        }
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
            state.withLock { s in
                swap(&s.jobs, &jobs)
                s.sleeping = jobs.isEmpty
            }
            if !jobs.isEmpty {
                for job in jobs { job.runSynchronously(on: executor) }
                continue
            }
            wait(into: &events, &ready)
        }
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
    private func wait(into events: inout [epoll_event], _ watches: inout ReadyWatches) {
        let ready = epoll_wait(epoll, &events, Int32(events.count), -1)
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
}
