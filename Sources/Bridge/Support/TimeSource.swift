import Glibc

/// Where a node reads the time for event timestamps and its timeouts: the wall clock on a rig,
/// the virtual clock in the simulation.
public protocol TimeSource: Sendable {
    /// Milliseconds since the Unix epoch.
    func nowMilliseconds() -> Int64
}

public struct WallClock: TimeSource {
    public init() {}
    public func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
