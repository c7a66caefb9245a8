import Logging
import Synchronization
import Testing

@testable import Bridge

/// A flood of one message (issue 16: 10 MB of garbage from a board became 13 MB of stderr)
/// costs a few lines per window and a count, while other messages pass untouched.
@Suite struct RateLimitedLogTests {
    @Test func aRepeatedMessageIsWrittenAFewTimesPerWindowThenCounted() {
        let sink = CollectedLog()
        let clock = Mutex<Int64>(0)
        let logger = Logger(label: "t") { label in
            RateLimitedLogHandler(CollectedLog.Handler(sink: sink), label: label, perWindow: 3, windowMilliseconds: 1_000, now: { clock.withLock { $0 } })
        }
        for index in 0..<1_000 {
            logger.warning("UCI stream error", metadata: ["skipped": "\(index)"])
            if index == 500 { logger.notice("something else") }
        }
        #expect(sink.lines.withLock { $0 } == ["warning UCI stream error", "warning UCI stream error", "warning UCI stream error", "notice something else"])
        clock.withLock { $0 = 1_500 }
        logger.warning("UCI stream error")
        #expect(
            sink.lines.withLock { Array($0.suffix(2)) }
                == ["warning UCI stream error (repeated 997 more times, not shown)", "warning UCI stream error"])
    }

    @Test func aSummaryComesWithTheNextLineOfAnyKind() {
        let sink = CollectedLog()
        let clock = Mutex<Int64>(0)
        let logger = Logger(label: "t") { label in
            RateLimitedLogHandler(CollectedLog.Handler(sink: sink), label: label, perWindow: 1, windowMilliseconds: 1_000, now: { clock.withLock { $0 } })
        }
        logger.error("board silent")
        logger.error("board silent")
        clock.withLock { $0 = 2_000 }
        logger.info("board back")
        #expect(sink.lines.withLock { $0 } == ["error board silent", "error board silent (repeated 1 more times, not shown)", "info board back"])
    }
}
