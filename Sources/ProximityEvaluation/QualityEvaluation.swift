import Bridge
import Proximity
import Simulation

/// Runs traces through the proximity engine with the simulation's radio model and scores the
/// result against the traces' ground truth.
package enum QualityEvaluation {
    /// How much of each situation one evaluation covers.
    package struct Scale: Sendable {
        package var bumpGestures: Int
        package var handOvers: Int
        package var passBys: Int
        /// One hour each.
        package var tableNeighbours: Int
        /// Ten minutes each.
        package var walkingGroups: Int
        /// One hour each.
        package var boundaryPeers: Int
        /// One hour each.
        package var atClearancePeers: Int

        package init(
            bumpGestures: Int, handOvers: Int, passBys: Int, tableNeighbours: Int, walkingGroups: Int, boundaryPeers: Int,
            atClearancePeers: Int
        ) {
            self.bumpGestures = bumpGestures
            self.handOvers = handOvers
            self.passBys = passBys
            self.tableNeighbours = tableNeighbours
            self.walkingGroups = walkingGroups
            self.boundaryPeers = boundaryPeers
            self.atClearancePeers = atClearancePeers
        }

        /// The documented full run (docs/PROXIMITY.md, "Proximity quality").
        package static let full = Scale(
            bumpGestures: 10_000, handOvers: 2_000, passBys: 2_000, tableNeighbours: 1_000, walkingGroups: 600,
            boundaryPeers: 200, atClearancePeers: 200)

        package func scaled(by factor: Double) -> Scale {
            func s(_ n: Int) -> Int { max(1, Int((Double(n) * factor).rounded())) }
            return Scale(
                bumpGestures: s(bumpGestures), handOvers: s(handOvers), passBys: s(passBys), tableNeighbours: s(tableNeighbours),
                walkingGroups: s(walkingGroups), boundaryPeers: s(boundaryPeers), atClearancePeers: s(atClearancePeers))
        }
    }

    /// The radio the evaluation assumes (the numbers): NLoS 5 %, 10 % dropouts, 1 %
    /// outliers, contact bias −3 cm, and the given ranging noise.
    package static func radio(sigma: Double) -> RadioModel {
        var radio = RadioModel()
        radio.sigma = sigma
        radio.nlosProbability = 0.05
        radio.dropoutProbability = 0.10
        return radio
    }

    /// What the engine did with one trace: contact times and zone changes (seconds), and how far
    /// the filtered distance was from the truth after each reading (metres).
    struct Outcome {
        var contacts: [Double] = []
        var zoneChanges: [Double] = []
        var errors: [Double] = []
    }

    /// Ranges along `trace` every `interval` (first round at a random phase) and feeds the engine.
    static func run(
        _ trace: Trace, config: ProximityConfig, radio: RadioModel, intervalMilliseconds: Int64, random: inout SplitMix64
    ) -> Outcome {
        var tracker = ProximityTracker(config: config)
        var outcome = Outcome()
        let end = Int64(trace.duration * 1000)
        var time = Int64(random.unit() * Double(intervalMilliseconds))
        while time <= end {
            let t = Double(time) / 1000
            // The board reports whole centimetres.
            let reading = radio.rangingReading(trueDistance: trace.distance(at: t), random: &random)
            let sample = RangeSample(
                time: time, distance: reading.map { ($0.metres * 100).rounded() / 100 }, nonLineOfSight: reading?.nonLineOfSight ?? false)
            for change in tracker.update(sample) {
                switch change {
                case .contact: outcome.contacts.append(t)
                case .near, .far: outcome.zoneChanges.append(t)
                }
            }
            if let filtered = tracker.filtered { outcome.errors.append(abs(filtered - trace.distance(at: t))) }
            time += intervalMilliseconds
        }
        return outcome
    }

    package static func run(
        sigma: Double, config: ProximityConfig = .default, scale: Scale, seed: UInt64, intervalMilliseconds: Int64 = 100
    ) -> QualityFigures {
        let radio = radio(sigma: sigma)
        var figures = QualityFigures(sigma: sigma, configuredSigma: config.rangingSigmaMetres)
        for (kindIndex, kind) in Trace.Kind.allCases.enumerated() {
            let count =
                switch kind {
                case .approachAndBump: scale.bumpGestures
                case .handOver: scale.handOvers
                case .passBy: scale.passBys
                case .tableNeighbour: scale.tableNeighbours
                case .walkingGroup: scale.walkingGroups
                case .boundary: scale.boundaryPeers
                case .atClearance: scale.atClearancePeers
                }
            for index in 0..<count {
                // The situation depends on the seed, kind and index only, so every σ sees the same
                // situations; the noise also depends on σ.
                var situation = SplitMix64(seed: seed ^ (UInt64(kindIndex) << 40) ^ UInt64(index))
                var generator = TraceGenerator(
                    seed: situation.next(), bumpMetres: config.bumpMetres, clearMetres: config.clearMetres,
                    nearMetres: config.nearMetres, farMetres: config.farMetres)
                let trace = generator.make(kind)
                var noise = SplitMix64(seed: situation.next() ^ sigma.bitPattern)
                let outcome = run(trace, config: config, radio: radio, intervalMilliseconds: intervalMilliseconds, random: &noise)
                figures.record(trace, outcome, clearMetres: config.clearMetres)
            }
        }
        return figures
    }
}

/// The scored results of one evaluation at one noise level.
package struct QualityFigures: Sendable {
    /// The radio's ranging noise, and the σ the engine was configured with.
    package var sigma: Double
    package var configuredSigma: Double
    /// Bump gestures, and those with at least one contact detected during the gesture.
    package var gestures = 0
    package var detected = 0
    /// Gestures with more than one contact detected.
    package var doubleBumps = 0
    /// Seconds from touch, and from reaching the bump threshold, to the first detection.
    package var latencies: [Double] = []
    package var latenciesFromThreshold: [Double] = []
    /// Peers that never came closer than the clearance (table, walking, pass-by, far hand-overs).
    package var clearPeerHours = 0.0
    package var clearFalseBumps = 0
    /// Peers standing still at exactly the clearance.
    package var atClearanceHours = 0.0
    package var atClearanceFalseBumps = 0
    /// Hand-overs that came within the clearance but not into contact (20–30 cm).
    package var closeHandOvers = 0
    package var closeHandOverBumps = 0
    /// Peers standing still at a zone threshold.
    package var boundaryHours = 0.0
    package var boundaryFlaps = 0
    /// |filtered − true| after each reading of moving peers (pass-bys, walking groups), metres.
    package var movingErrors: [Double] = []

    package init(sigma: Double, configuredSigma: Double) {
        self.sigma = sigma
        self.configuredSigma = configuredSigma
    }

    mutating func record(_ trace: Trace, _ outcome: QualityEvaluation.Outcome, clearMetres: Double) {
        let hours = trace.duration / 3600
        switch trace.kind {
        case .approachAndBump:
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
        case .atClearance:
            atClearanceHours += hours
            atClearanceFalseBumps += outcome.contacts.count
        case .handOver where trace.closest < clearMetres:
            closeHandOvers += 1
            closeHandOverBumps += outcome.contacts.count
        case .handOver, .passBy, .tableNeighbour, .walkingGroup:
            clearPeerHours += hours
            clearFalseBumps += outcome.contacts.count
        }
        if trace.kind == .passBy || trace.kind == .walkingGroup { movingErrors += outcome.errors }
    }

    package var recall: Double { Double(detected) / Double(max(gestures, 1)) }
    package var falseBumpsPer100PeerHours: Double { 100 * Double(clearFalseBumps) / max(clearPeerHours, .leastNonzeroMagnitude) }
    package var atClearanceFalseBumpsPer100PeerHours: Double {
        100 * Double(atClearanceFalseBumps) / max(atClearanceHours, .leastNonzeroMagnitude)
    }
    package var flapsPerPeerHour: Double { Double(boundaryFlaps) / max(boundaryHours, .leastNonzeroMagnitude) }
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
