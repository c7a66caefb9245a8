import Synchronization

/// The UCI host's one timer, on the host's clock (an injected one in tests): it calls `fire` once
/// the earliest deadline asked for has passed, with at most one task asleep at a time.
///
/// Why not a task per command attempt: on Linux a cancelled sleep on the system clock leaves
/// its Dispatch timer armed until the deadline, so a timeout task per attempt left hundreds
/// armed while a node set up its sessions. Why not a timer on the node's `EventLoop`: that runs
/// on the monotonic system clock, and the tests (and the simulation) move the host's clock by
/// hand; and hosts without a loop (`doctor`, `devices`) would need a second way anyway.
///
/// A later deadline than the one slept for needs no wake-up: the sleeping task finds it when it
/// wakes, and sleeps on. Commands' deadlines only ever move later (one command at a time, one
/// timeout), so a busy host keeps a single task asleep. Only an earlier deadline (a stalled
/// packet's, while a command waits) starts a new task; the old one ends when it wakes.
/// The task ends when nothing is left to wait for.
final class DeadlineTimer: Sendable {
    /// Handles what is due at `now` and returns the next deadline, if any.
    typealias Fire = @Sendable (_ now: Duration) -> Duration?

    private struct State {
        /// What the current task sleeps until; nil when no task runs.
        var target: Duration?
        /// Bumped for each task started: an older one, waking, ends.
        var generation = 0
        /// The current task is in `fire`: a deadline asked for meanwhile is kept here for it.
        var firing = false
        var missed: Duration?
    }
    private let state = Mutex(State())
    /// Time on the host's clock since the timer was made.
    let now: @Sendable () -> Duration
    private let sleep: @Sendable (_ until: Duration) async -> Void
    private let executor: (any TaskExecutor)?

    init(clock: any Clock<Duration>, executor: (any TaskExecutor)?) {
        (now, sleep) = Self.reading(clock)
        self.executor = executor
    }

    /// Deadlines as durations since now on `clock`; sleeping until an instant rather than for a
    /// duration, so a clock moved before the sleep began still wakes it.
    private static func reading<C: Clock<Duration>>(
        _ clock: C
    ) -> (@Sendable () -> Duration, @Sendable (Duration) async -> Void) {
        let origin = clock.now
        return (
            { origin.duration(to: clock.now) },
            { deadline in try? await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
        )
    }

    /// Makes sure `fire` runs once `deadline` has passed (every caller passes the same `fire`).
    func wake(at deadline: Duration, _ fire: @escaping Fire) {
        let generation = state.withLock { s -> Int? in
            if s.firing {
                s.missed = min(s.missed ?? deadline, deadline)
                return nil
            }
            if let target = s.target, target <= deadline { return nil }
            s.target = deadline
            s.generation += 1
            return s.generation
        }
        guard let generation else { return }
        Task(executorPreference: executor) { await self.run(from: deadline, generation: generation, fire) }
    }

    private func run(from deadline: Duration, generation: Int, _ fire: Fire) async {
        var target = deadline
        while true {
            await sleep(target)
            let current = state.withLock { s in
                guard s.generation == generation else { return false }
                s.firing = true
                return true
            }
            guard current else { return }
            let next = fire(now())
            let again = state.withLock { s -> Duration? in
                s.firing = false
                defer { s.missed = nil }
                s.target = [next, s.missed].compactMap { $0 }.min()
                return s.target
            }
            guard let again else { return }
            target = again
        }
    }
}
