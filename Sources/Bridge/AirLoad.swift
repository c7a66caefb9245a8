import UCI

/// Whether the UWB air around this rig is full, from its own rounds: the share that failed
/// (no measurement: RX timeout, lost frames) over the last `window` rounds of sessions that work
/// (a success within `aliveMilliseconds`: a session still being set up or torn down by its peer,
/// or a peer walking out of range, fails for reasons the air does not cure). When
/// it passes `fullShare` the scheduler sheds the sessions of peers that are neither near nor
/// strong (`RangingScheduler`'s third tier): ranging someone 15 m away ten times a second takes
/// air that a bump next door needs. Below `clearShare`, after `holdMilliseconds` at least, it
/// stops. The shares leave room for what a quiet room loses anyway (5 % of rounds in the radio
/// model, more during body shadowing). Shedding is what makes the share fall, so it would fall
/// below `clearShare` within seconds, the far peers come back and fill the air again: the hold
/// keeps the rig from flapping so.
struct AirLoad: Sendable {
    static let window = 200
    static let fullShare = 0.30
    static let clearShare = 0.15
    static let holdMilliseconds: Int64 = 60_000

    /// The last rounds' outcomes as a ring, true for a failure.
    private var outcomes = [Bool](repeating: false, count: Self.window)
    private var next = 0
    private var counted = 0
    private var failures = 0
    private(set) var isFull = false
    private var fullSince: Int64 = 0

    static let aliveMilliseconds: Int64 = 2_000

    /// Adds one round with a peer whose rounds last succeeded at `lastSuccess` (before this one;
    /// nil: never, as the peer's record keeps it); returns the new verdict when it changed.
    mutating func record(failed: Bool, lastSuccess: Int64?, now: Int64) -> Bool? {
        if failed {
            guard let lastSuccess, now - lastSuccess <= Self.aliveMilliseconds else { return nil }
        }
        return count(failed: failed, now: now)
    }

    private mutating func count(failed: Bool, now: Int64) -> Bool? {
        if counted == Self.window, outcomes[next] { failures -= 1 }
        outcomes[next] = failed
        if failed { failures += 1 }
        next = (next + 1) % Self.window
        counted = min(counted + 1, Self.window)
        guard counted == Self.window else { return nil }
        let share = failureShare
        if !isFull, share > Self.fullShare {
            isFull = true
            fullSince = now
            return true
        }
        if isFull, share < Self.clearShare, now - fullSince >= Self.holdMilliseconds {
            isFull = false
            return false
        }
        return nil
    }

    /// Whether a whole window of rounds was counted: before that the share says little.
    var hasWindow: Bool { counted == Self.window }

    /// The share of the window's rounds that failed.
    var failureShare: Double { Double(failures) / Double(max(counted, 1)) }

    /// A measurement is a failed round unless it carries a distance.
    static func failed(_ status: StatusCode) -> Bool {
        status != .ok && status != .okNegativeDistanceReport
    }
}
