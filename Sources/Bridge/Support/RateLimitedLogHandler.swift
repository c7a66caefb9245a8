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
