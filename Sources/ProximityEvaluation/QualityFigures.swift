import Bridge
import Proximity
import Simulation

/// The scored results of one evaluation of one radio setup.
package struct QualityFigures: Sendable {
    package var setup: String
    /// Whether the row's board reports RSSI, and whether the targets apply to it.
    package var reportsRSSI: Bool
    package var targeted: Bool
    /// Bump gestures, and those with at least one contact detected during the gesture.
    package var gestures = 0
    package var detected = 0
    /// Gestures with more than one contact detected.
    package var doubleBumps = 0
    /// Seconds from touch, and from reaching the bump threshold, to the first detection.
    package var latencies: [Double] = []
    package var latenciesFromThreshold: [Double] = []
    /// Contacts decided while the devices were still 10–15 cm apart, and more than 15 cm apart
    /// (too early to be a touch).
    package var earlyContacts = 0
    package var farContacts = 0
    /// The true distance at the farthest contact decided during a bump gesture (metres).
    package var farthestDecision = 0.0
    /// Peers that never came closer than the clearance (table, walking, pass-by, far hand-overs,
    /// standing at 30–40 cm).
    package var clearPeerHours = 0.0
    package var clearFalseBumps = 0
    /// Peers standing still at exactly the clearance.
    package var atClearanceHours = 0.0
    package var atClearanceFalseBumps = 0
    /// Hand-overs by closest approach (5 cm bins, keyed by the bin's lower edge in cm): how
    /// many, and how many produced a contact.
    package var handOvers: [Int: (count: Int, bumped: Int)] = [:]
    /// Peers standing still at a zone threshold, and in the near zone (1.0–1.2 m).
    package var boundaryHours = 0.0
    package var boundaryFlaps = 0
    package var nearZoneHours = 0.0
    package var nearZoneFlaps = 0
    /// |filtered − true| after each reading of moving peers (pass-bys, walking groups), metres.
    package var movingErrors: [Double] = []

    package init(setup: RadioSetup) {
        self.setup = setup.name
        self.reportsRSSI = setup.reportsRSSI
        self.targeted = setup.targeted
    }

    mutating func record(_ trace: Trace, _ outcome: QualityEvaluation.Outcome, clearMetres: Double) {
        let hours = trace.duration / 3600
        switch trace.kind {
        case .approachAndBump:
            earlyContacts += outcome.contactDistances.filter { $0 > 0.10 && $0 <= 0.15 }.count
            farContacts += outcome.contactDistances.filter { $0 > 0.15 }.count
            farthestDecision = max(farthestDecision, outcome.contactDistances.max() ?? 0)
            for contact in trace.contacts {
                gestures += 1
                let seen = outcome.contacts.filter { contact.window.lowerBound <= $0 && $0 <= contact.window.upperBound + 0.5 }
                if let first = seen.first {
                    detected += 1
                    latencies.append(first - contact.touch)
                    latenciesFromThreshold.append(first - contact.withinThreshold)
                }
                if seen.count > 1 { doubleBumps += 1 }
            }
        case .boundary:
            boundaryHours += hours
            boundaryFlaps += max(0, outcome.zoneChanges.count - 1)
        case .nearZone:
            nearZoneHours += hours
            nearZoneFlaps += max(0, outcome.zoneChanges.count - 1)
        case .atClearance:
            atClearanceHours += hours
            atClearanceFalseBumps += outcome.contacts.count
        case .handOver:
            let bin = Int((trace.closest * 100 / 5).rounded(.down)) * 5
            handOvers[bin, default: (0, 0)].count += 1
            if !outcome.contacts.isEmpty { handOvers[bin, default: (0, 0)].bumped += 1 }
            if trace.closest >= clearMetres {
                clearPeerHours += hours
                clearFalseBumps += outcome.contacts.count
            }
        case .passBy, .tableNeighbour, .walkingGroup, .standingClose:
            clearPeerHours += hours
            clearFalseBumps += outcome.contacts.count
        }
        if trace.kind == .passBy || trace.kind == .walkingGroup { movingErrors += outcome.errors }
    }

    package var recall: Double { Double(detected) / Double(max(gestures, 1)) }
    /// Contacts decided 10–15 cm apart, per bump gesture.
    package var earlyShare: Double { Double(earlyContacts) / Double(max(gestures, 1)) }
    package var falseBumpsPer100PeerHours: Double { 100 * Double(clearFalseBumps) / max(clearPeerHours, .leastNonzeroMagnitude) }
    package var atClearanceFalseBumpsPer100PeerHours: Double {
        100 * Double(atClearanceFalseBumps) / max(atClearanceHours, .leastNonzeroMagnitude)
    }
    package var flapsPerPeerHour: Double {
        Double(boundaryFlaps + nearZoneFlaps) / max(boundaryHours + nearZoneHours, .leastNonzeroMagnitude)
    }
    /// Share of hand-overs whose closest approach lies in `range` (cm) that bumped.
    package func handOverBumpShare(_ range: Range<Int>) -> (share: Double, bumped: Int, count: Int) {
        let bins = handOvers.filter { range.contains($0.key) }.values
        let count = bins.map(\.count).reduce(0, +)
        let bumped = bins.map(\.bumped).reduce(0, +)
        return (Double(bumped) / Double(max(count, 1)), bumped, count)
    }
    package var medianLatency: Double? { Self.percentile(latencies, 0.5) }
    package var p95Latency: Double? { Self.percentile(latencies, 0.95) }
    package var medianLatencyFromThreshold: Double? { Self.percentile(latenciesFromThreshold, 0.5) }
    package var p95LatencyFromThreshold: Double? { Self.percentile(latenciesFromThreshold, 0.95) }
    package var movingErrorP95: Double? { Self.percentile(movingErrors, 0.95) }
    package var movingErrorP999: Double? { Self.percentile(movingErrors, 0.999) }

    /// Nearest-rank percentile.
    static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
    }
}
