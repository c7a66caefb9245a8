import Glibc

/// `ready`'s first answer, asked up to `polls` times `microseconds` apart; nil if it never had
/// one. Counted rather than timed: a process stopped for seconds (seen in CI) stops this thread
/// too, and costs the wait one poll instead of its whole bound.
func polled<T>(_ polls: Int, every microseconds: UInt32, _ ready: () -> T?) -> T? {
    for _ in 0..<polls {
        if let value = ready() { return value }
        usleep(microseconds)
    }
    return nil
}
