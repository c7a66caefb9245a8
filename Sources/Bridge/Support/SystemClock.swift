import Glibc

/// The host's clocks: CLOCK_MONOTONIC for timeouts, CLOCK_REALTIME for timestamps.
package struct SystemClock: TimeSource {
    package init() {}

    package func nowMilliseconds() -> Int64 { Self.read(CLOCK_MONOTONIC) }
    package func wallMilliseconds() -> Int64 { Self.read(CLOCK_REALTIME) }

    private static func read(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
