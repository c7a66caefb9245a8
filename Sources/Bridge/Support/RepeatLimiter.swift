import Logging
import Synchronization

/// Counts occurrences of each message per window; shared by every copy of a handler.
package final class RepeatLimiter: Sendable {
    struct Key: Hashable, Sendable {
        var label: String
        var level: Logger.Level
        var message: String
    }

    private struct Window {
        var start: Int64
        var written = 0
        var suppressed = 0
    }

    private let perWindow: Int
    private let windowMilliseconds: Int64
    private let now: @Sendable () -> Int64
    /// Bounded: messages whose window ended with nothing to report are forgotten.
    private let windows = Mutex<[Key: Window]>([:])

    init(perWindow: Int, windowMilliseconds: Int64, now: @escaping @Sendable () -> Int64) {
        self.perWindow = perWindow
        self.windowMilliseconds = windowMilliseconds
        self.now = now
    }

    /// Whether to write this occurrence, and the summaries due (messages whose window ended
    /// with occurrences suppressed).
    func admit(_ key: Key) -> (write: Bool, summaries: [(Key, Int)]) {
        let time = now()
        return windows.withLock { windows in
            var summaries: [(Key, Int)] = []
            for (other, window) in windows where time - window.start >= windowMilliseconds {
                if window.suppressed > 0 { summaries.append((other, window.suppressed)) }
                windows[other] = nil
            }
            var window = windows[key] ?? Window(start: time)
            defer { windows[key] = window }
            guard window.written < perWindow else {
                window.suppressed += 1
                return (false, summaries)
            }
            window.written += 1
            return (true, summaries)
        }
    }

    /// Milliseconds since the process first asked, on the monotonic clock.
    package static let monotonicMilliseconds: @Sendable () -> Int64 = {
        let elapsed = processStart.duration(to: .now)
        return elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }
    private static let processStart = ContinuousClock.now
}
