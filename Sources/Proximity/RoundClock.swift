/// The time of each ranging round, from the radio's round counter rather than from when the host
/// happened to read the notification.
///
/// The estimator's speed comes from time differences, and at 100 ms per round a host that reads
/// two notifications in one burst (USB batching, a busy scheduler) would otherwise see rounds
/// 0 ms or 200 ms apart. A UWBS numbers its rounds (`sequence_number`) and reports its interval,
/// so round n happens at anchor + n·interval. Notifications are read after their round, never
/// before, so the clock re-anchors on the host's time when the arithmetic runs ahead of the host
/// by more than an interval (the anchor itself was read late) or behind it by more than
/// `maxLag` (a restarted session, a counter that jumped, crystal drift over many hours).
package struct RoundClock: Sendable {
    private var anchor: (sequence: UInt32, time: Int64, interval: Int64)?
    package static let maxLagMilliseconds: Int64 = 1_000

    package init() {}

    /// Time of round `sequence`, given the interval the radio reports (0 when it reports none, as
    /// pica does: then `fallbackInterval`) and the host's time of reading it.
    package mutating func time(
        ofRound sequence: UInt32, reportedInterval: UInt32, fallbackInterval: Int64, hostTime: Int64
    ) -> Int64 {
        let interval = reportedInterval > 0 ? Int64(reportedInterval) : fallbackInterval
        if let anchor, anchor.interval == interval {
            let rounds = Int64(Int32(bitPattern: sequence &- anchor.sequence))
            let time = anchor.time + rounds * interval
            if rounds >= 0, time <= hostTime + interval, hostTime - time <= Self.maxLagMilliseconds { return time }
        }
        anchor = (sequence, hostTime, interval)
        return hostTime
    }
}
