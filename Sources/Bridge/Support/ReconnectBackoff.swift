/// How long to wait before reopening a board that went away, and between attempts that fail.
///
/// A board that had been up a while is reopened at once. One that keeps going away soon after it
/// came back (a port that accepts and closes, a board that resets itself) is reopened after 1 s,
/// then 2, 4, 8 and at most 10 s; attempts that fail (nothing there yet) space out the same way.
/// Each wait is jittered by ±20 %, so rigs whose board server restarted do not all knock at
/// once. Once a board stays up for `stableAfter`, the next loss starts over.
///
/// The cap keeps an unplug-and-replug within 10 s of coming back, and a flapping board to one
/// `removed`/`ready` pair of `device` events per 10 s at most.
package struct ReconnectBackoff: Sendable {
    package static let first = Duration.seconds(1)
    package static let cap = Duration.seconds(10)
    package static let stableAfter = Duration.seconds(30)
    static let jitter = 0.2

    /// Waits so far in the current run of trouble; 0 after a stable spell.
    private var step = 0
    private var random: SplitMix64

    package init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    /// The wait before the first attempt after a loss, given how long the board had been up.
    package mutating func delayAfterLoss(upFor: Duration) -> Duration {
        if upFor >= Self.stableAfter { step = 0 }
        return advance(immediately: step == 0)
    }

    /// The wait before the next attempt after one failed.
    package mutating func delayAfterFailure() -> Duration {
        advance(immediately: false)
    }

    private mutating func advance(immediately: Bool) -> Duration {
        defer { step += 1 }
        guard !immediately else { return .zero }
        // Four doublings already pass the cap; more would only overflow the shift.
        let base = min(Self.cap, Self.first * (1 << min(max(0, step - 1), 4)))
        return base * (1 + Self.jitter * (2 * random.unit() - 1))
    }
}
