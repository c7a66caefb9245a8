import Events
import PeerProtocol

/// What the core reports on its own at a tick: `stats` and `nearest`.
extension NodeCore {
    /// Every stats interval, while the node has more peers than sessions or dropped anything.
    mutating func reportStats(ranging: Int) {
        guard now - lastStatsAt >= config.statsIntervalMilliseconds else { return }
        lastStatsAt = now
        let shed = environment.takeShed()
        defer { (evicted, invalidReadings) = (0, 0) }
        guard peers.count > scheduler.budget || shed.ranges > 0 || shed.inputs > 0 || evicted > 0 || invalidReadings > 0 else { return }
        events.append(
            Event(
                node: tag,
                body: .stats(
                    .init(
                        peers: peers.count, ranging: ranging, budget: scheduler.budget, shedRanges: shed.ranges,
                        shedInputs: shed.inputs, evicted: evicted, invalidReadings: invalidReadings))))
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
}
