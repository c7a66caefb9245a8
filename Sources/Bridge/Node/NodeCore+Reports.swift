import CoreMetrics
import Events
import PeerProtocol
import UCI

/// What the core reports on its own: `stats` and `nearest` at a tick, and how full the air is.
extension NodeCore {
    /// Every stats interval, while the node has more peers than sessions, finds the air full or
    /// dropped anything. Intervals count from the node's start, not on the clock's own grid: a
    /// simulation's clock starts at the wall time of its run, and its stream must not depend on it.
    mutating func reportStats(ranging: Int) {
        guard now - lastStatsAt >= config.statsIntervalMilliseconds else { return }
        lastStatsAt = now
        let shed = environment.takeShed()
        defer { (evicted, invalidReadings) = (0, 0) }
        let busy = peers.count > scheduler.budget || airLoad.isFull
        guard busy || shed.ranges > 0 || shed.inputs > 0 || evicted > 0 || invalidReadings > 0 else { return }
        let air = airLoad.hasWindow
            ? Event.Stats.Air(roundFailurePercent: Int((airLoad.failureShare * 100).rounded()), full: airLoad.isFull) : nil
        events.append(
            Event(
                node: tag,
                body: .stats(
                    .init(
                        peers: peers.count, ranging: ranging, budget: scheduler.budget, shedRanges: shed.ranges,
                        shedInputs: shed.inputs, evicted: evicted, invalidReadings: invalidReadings, air: air))))
    }

    /// Writes a `nearest` event when the closest peer or its band differs from the last one written.
    mutating func reportNearest() {
        let current = nearest.current
        guard current?.peer != reportedNearest?.peer || current?.band != reportedNearest?.band else { return }
        reportedNearest = current
        events.append(
            Event(
                node: tag,
                body: .nearest(
                    .init(
                        peer: current.map { PeerID($0.peer).description }, distance: current?.distance,
                        band: current.flatMap { Event.Nearest.Band(rawValue: $0.band.rawValue) }))))
    }

    /// Counts a rig's round in `AirLoad` (phones' rounds are not the rig's sessions) and keeps
    /// when the peer's last good one was.
    mutating func countAirRound(with peer: PeerID, status: StatusCode) {
        guard let index = peers.index(forKey: peer) else { return }
        let failed = AirLoad.failed(status)
        let lastGoodRound = inPlace(at: index) { $0.lastGoodRound }
        if let full = airLoad.record(failed: failed, lastSuccess: lastGoodRound, now: now) {
            reportAirLoad(full: full)
        }
        if !failed { peers.values[index].lastGoodRound = now }
    }

    /// Says on stderr when the air fills up or clears again (`AirLoad`).
    func reportAirLoad(full: Bool) {
        let share = "\(Int((airLoad.failureShare * 100).rounded())) %"
        if full {
            logger.warning(
                "the UWB air is saturated: \(share) of the last \(AirLoad.window) rounds failed; ranging only peers near or walking up until it clears")
        } else {
            logger.notice("the UWB air has room again: \(share) of rounds failed; every peer takes its turn")
        }
    }

    /// The share of this rig's last rounds that failed (`AirLoad`) and whether it sheds far peers.
    static func reportAir(failureShare: Double, full: Bool, node: PeerID) {
        Gauge(label: "nearby_uwb_round_failure_ratio", dimensions: [("node", node.description)]).record(failureShare)
        Gauge(label: "nearby_uwb_air_full", dimensions: [("node", node.description)]).record(full ? 1 : 0)
    }
}
