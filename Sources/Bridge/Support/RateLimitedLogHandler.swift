import Logging
import Synchronization

/// Keeps a flood of one log message from flooding stderr: within a window, the first few
/// occurrences of a message (same label, level and text; metadata may differ) are written, the
/// rest are counted, and the count is written as one summary line once the window is over (with
/// the next line logged after it). A board sending garbage then costs a few lines per window,
/// not one per bad byte run.
package struct RateLimitedLogHandler: LogHandler {
    private var inner: any LogHandler
    private let limiter: RepeatLimiter
    private let label: String

    /// - Parameter now: monotonic milliseconds; tests pass their own.
    package init(
        _ inner: any LogHandler, label: String, perWindow: Int = 5, windowMilliseconds: Int64 = 5_000,
        now: @escaping @Sendable () -> Int64 = RepeatLimiter.monotonicMilliseconds
    ) {
        self.inner = inner
        self.label = label
        limiter = RepeatLimiter(perWindow: perWindow, windowMilliseconds: windowMilliseconds, now: now)
    }

    package var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    package var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    package func log(event: LogEvent) {
        let (write, summaries) = limiter.admit(RepeatLimiter.Key(label: label, level: event.level, message: event.message.description))
        for (key, suppressed) in summaries {
            var summary = event
            summary.level = key.level
            summary.message = "\(key.message) (repeated \(suppressed) more times, not shown)"
            summary.metadata = nil
            inner.log(event: summary)
        }
        if write { inner.log(event: event) }
    }
}

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
