import Logging
import Synchronization
import StreamIO
import Testing
import UCI
@testable import UCIHost

/// A clock the test moves by hand, which counts the sleeps begun on it: with the system clock,
/// each is a Dispatch timer that stays armed until its deadline, even once cancelled.
final class CountingClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepsBegun = 0
        var sleepers: [(deadline: Instant, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }
    var sleepsBegun: Int { state.withLock { $0.sleepsBegun } }
    var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// Not cancellable: the host under test never cancels a sleep.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { continuation in
            let due = state.withLock { s in
                s.sleepsBegun += 1
                guard deadline > s.now else { return true }
                s.sleepers.append((deadline, continuation))
                return false
            }
            if due { continuation.resume() }
        }
    }

    func advance(by duration: Duration) {
        let due = state.withLock { s in
            s.now = s.now.advanced(by: duration)
            let now = s.now
            defer { s.sleepers.removeAll { $0.deadline <= now } }
            return s.sleepers.filter { $0.deadline <= now }.map(\.continuation)
        }
        due.forEach { $0.resume() }
    }

    /// Returns once `count` sleepers wait.
    func untilSleeping(_ count: Int = 1) async {
        while sleeping < count { try? await Task.sleep(for: .milliseconds(1)) }
    }
}
