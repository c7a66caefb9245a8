import CLinux
import Glibc
import Synchronization

/// One thread that waits for descriptors to become readable and runs Swift jobs: a serial
/// executor that does its own I/O, in the manner of an event loop.
///
/// Why: a range notification handed from a reader thread to an async task costs a thread wake-up
/// (a futex and a context switch) on each hand-off, and on a Raspberry Pi those wake-ups cost far
/// more than decoding and filtering the notification. Actors whose executor is this loop, and
/// streams it watches, take a notification from `read` to the event line's `write` on one
/// thread: the one wake-up is the kernel's, for the readable descriptor.
///
/// Jobs enqueued from the loop's own thread run after the current one without any system call;
/// from another thread they write an eventfd only when the loop is asleep in `poll`. As a task
/// executor (`Task(executorPreference:)`), it also runs the default actors such a task calls.
public final class EventLoop: SerialExecutor, TaskExecutor, Sendable {
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
        /// The loop is in (or about to enter) `poll`: work from other threads must wake it.
        var sleeping = false
    }

    private let state = Mutex(State())
    private let wake: Int32
    private let thread = Mutex<pthread_t?>(nil)
    public let name: String

    /// Starts the loop's thread, named `name`.
    public init(name: String) {
        self.name = name
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        precondition(wake >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
        IOThread.detach(name: name) { [self] in
            thread.withLock { $0 = pthread_self() }
            run()
        }
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

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Whether the caller runs on the loop's thread.
    public var isCurrent: Bool {
        guard let loop = thread.withLock({ $0 }) else { return false }
        return pthread_equal(loop, pthread_self()) != 0
    }

    public func checkIsolated() {
        precondition(isCurrent, "not on event loop \(name)")
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
        let executor = asUnownedSerialExecutor()
        while true {
            let (jobs, sources) = state.withLock { s in
                defer { s.jobs = [] }
                s.sleeping = s.jobs.isEmpty
                return (s.jobs, s.sleeping ? s.sources : [:])
            }
            if !jobs.isEmpty {
                for job in jobs { job.runSynchronously(on: executor) }
                continue
            }
            poll(sources)
        }
    }

    /// Waits for a watched descriptor, an end signal or the loop's own wake-up, and handles what
    /// is ready. Another thread's job or watch arriving meanwhile signals the wake-up.
    private func poll(_ sources: [Int: Source]) {
        let ids = Array(sources.keys)
        var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        for id in ids {
            fds.append(pollfd(fd: sources[id]!.fd, events: Int16(POLLIN), revents: 0))
            fds.append(pollfd(fd: sources[id]!.endSignal, events: Int16(POLLIN), revents: 0))
        }
        let ready = Glibc.poll(&fds, nfds_t(fds.count), -1)
        // Awake: jobs the handlers below enqueue need no wake-up.
        state.withLock { $0.sleeping = false }
        guard ready > 0 else { return }
        if fds[0].revents != 0 {
            var value: UInt64 = 0
            _ = Glibc.read(wake, &value, MemoryLayout<UInt64>.size)
        }
        for (index, id) in ids.enumerated() {
            let (data, end) = (fds[1 + 2 * index].revents, fds[2 + 2 * index].revents)
            guard data != 0 || end != 0, let source = sources[id] else { continue }
            if end != 0 || source.readable() == .end {
                _ = state.withLock { $0.sources.removeValue(forKey: id) }
                source.ended()
            }
        }
    }
}
