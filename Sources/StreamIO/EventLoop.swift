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
/// from another thread they write an eventfd only when the loop is asleep in `poll`. It is a
/// task executor (`Task(executorPreference:)`), not an actor's serial executor: jobs run with no
/// serial executor of their own, so a task on the loop enters the default actors it calls
/// right there on the thread, instead of enqueuing a job for each actor hop.
public final class EventLoop: TaskExecutor, Sendable {
    /// What a watched descriptor's handler asks for after running.
    public enum Watch: Sendable {
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
        /// Bumped whenever `sources` changes, so the loop rebuilds its poll set only then.
        var sourcesVersion = 0
        /// The loop is in (or about to enter) `poll`: work from other threads must wake it.
        var sleeping = false
    }

    /// What the loop's thread polls: its wake-up, then each watched descriptor and its end
    /// signal. Rebuilt only when the watches change, since the loop polls once per wake-up.
    private struct PollSet {
        var version = -1
        var ids: [Int] = []
        var handlers: [Source] = []
        var fds: [pollfd] = []

        init() {}

        init(_ sources: [Int: Source], version: Int, wake: Int32) {
            self.version = version
            fds.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
            for (id, source) in sources {
                ids.append(id)
                handlers.append(source)
                fds.append(pollfd(fd: source.fd, events: Int16(POLLIN), revents: 0))
                fds.append(pollfd(fd: source.endSignal, events: Int16(POLLIN), revents: 0))
            }
        }
    }

    private let state = Mutex(State())
    private let wake: Int32
    public let name: String

    /// Starts the loop's thread, named `name`.
    public init(name: String) {
        self.name = name
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        precondition(wake >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
        IOThread.detach(name: name) { [self] in run() }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let mustWake = state.withLock { s in
            s.jobs.append(job)
            defer { s.sleeping = false }
            return s.sleeping
        }
        if mustWake { signal() }
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Calls `readable` on the loop's thread whenever `fd` has bytes (or has hung up) until it
    /// returns `.end` or `endSignal` is signalled; then calls `ended` once. The descriptors stay
    /// the caller's: the loop never closes them.
    public func watch(
        _ fd: Int32, endSignal: Int32, readable: @escaping @Sendable () -> Watch, ended: @escaping @Sendable () -> Void
    ) {
        let mustWake = state.withLock { s in
            s.sources[s.nextSource] = Source(fd: fd, endSignal: endSignal, readable: readable, ended: ended)
            s.nextSource += 1
            s.sourcesVersion += 1
            defer { s.sleeping = false }
            return s.sleeping
        }
        if mustWake { signal() }
    }

    private func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, MemoryLayout<UInt64>.size)
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        // Two job buffers swapped under the lock, so a batch costs no allocation.
        var jobs: [UnownedJob] = []
        var pollSet = PollSet()
        while true {
            jobs.removeAll(keepingCapacity: true)
            let changedSources = state.withLock { s -> (sources: [Int: Source], version: Int)? in
                swap(&s.jobs, &jobs)
                s.sleeping = jobs.isEmpty
                return s.sleeping && s.sourcesVersion != pollSet.version ? (s.sources, s.sourcesVersion) : nil
            }
            if !jobs.isEmpty {
                for job in jobs { job.runSynchronously(on: executor) }
                continue
            }
            if let changedSources { pollSet = PollSet(changedSources.sources, version: changedSources.version, wake: wake) }
            poll(&pollSet)
        }
    }

    /// Waits for a watched descriptor, an end signal or the loop's own wake-up, and handles what
    /// is ready. Another thread's job or watch arriving meanwhile signals the wake-up.
    private func poll(_ set: inout PollSet) {
        let ready = Glibc.poll(&set.fds, nfds_t(set.fds.count), -1)
        // Awake: jobs the handlers below enqueue need no wake-up.
        state.withLock { $0.sleeping = false }
        guard ready > 0 else { return }
        if set.fds[0].revents != 0 {
            var value: UInt64 = 0
            _ = Glibc.read(wake, &value, MemoryLayout<UInt64>.size)
        }
        for index in set.ids.indices {
            let (data, end) = (set.fds[1 + 2 * index].revents, set.fds[2 + 2 * index].revents)
            guard data != 0 || end != 0 else { continue }
            let source = set.handlers[index]
            if end != 0 || source.readable() == .end {
                let id = set.ids[index]
                _ = state.withLock { s in
                    s.sourcesVersion += 1
                    return s.sources.removeValue(forKey: id)
                }
                source.ended()
            }
        }
    }
}
