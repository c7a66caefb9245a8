import Glibc

/// Where a node reads the time: a steady timeline for its timeouts, intervals and round times,
/// and the wall clock for event timestamps only. On a rig they differ: a Raspberry Pi has no
/// real-time clock, so NTP steps the wall clock after boot (often by months) and an operator may
/// set it by hand; a timeout measured on it would fire for every peer at once, or never. In the
/// simulation and in a replay both are the virtual clock.
package protocol TimeSource: Sendable {
    /// Milliseconds on a timeline that never steps (any origin).
    func nowMilliseconds() -> Int64
    /// Milliseconds since the Unix epoch, for stamping events.
    func wallMilliseconds() -> Int64
}

extension TimeSource {
    /// A virtual clock runs on the Unix epoch and never steps: its wall time is its time.
    package func wallMilliseconds() -> Int64 { nowMilliseconds() }
}
