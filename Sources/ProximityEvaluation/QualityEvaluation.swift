import Bridge
import Proximity
import Simulation

extension RangeCorrection {
    /// The DW3000 family's default: APS011's table, no offset.
    package static let dw3000 = RangeCorrection(table: .aps011PRF64, tableName: "aps011-prf64")
}

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
        /// One hour each: standing at 30–40 cm, and standing in the near zone at 1.0–1.2 m.
        package var standingClosePeers: Int
        package var nearZonePeers: Int

        package init(
            bumpGestures: Int, handOvers: Int, passBys: Int, tableNeighbours: Int, walkingGroups: Int, boundaryPeers: Int,
            atClearancePeers: Int, standingClosePeers: Int = 0, nearZonePeers: Int = 0
        ) {
            self.bumpGestures = bumpGestures
            self.handOvers = handOvers
            self.passBys = passBys
            self.tableNeighbours = tableNeighbours
            self.walkingGroups = walkingGroups
            self.boundaryPeers = boundaryPeers
            self.atClearancePeers = atClearancePeers
            self.standingClosePeers = standingClosePeers
            self.nearZonePeers = nearZonePeers
        }

        /// The documented full run (docs/PROXIMITY.md, "Proximity quality").
        package static let full = Scale(
            bumpGestures: 10_000, handOvers: 6_000, passBys: 2_000, tableNeighbours: 1_000, walkingGroups: 600,
            boundaryPeers: 200, atClearancePeers: 200, standingClosePeers: 200, nearZonePeers: 200)

        package func scaled(by factor: Double) -> Scale {
            func s(_ n: Int) -> Int { max(1, Int((Double(n) * factor).rounded())) }
            return Scale(
                bumpGestures: s(bumpGestures), handOvers: s(handOvers), passBys: s(passBys), tableNeighbours: s(tableNeighbours),
                walkingGroups: s(walkingGroups), boundaryPeers: s(boundaryPeers), atClearancePeers: s(atClearancePeers),
                standingClosePeers: s(standingClosePeers), nearZonePeers: s(nearZonePeers))
        }

        func count(of kind: Trace.Kind) -> Int {
            switch kind {
            case .approachAndBump: bumpGestures
            case .handOver: handOvers
            case .passBy: passBys
            case .tableNeighbour: tableNeighbours
            case .walkingGroup: walkingGroups
            case .boundary: boundaryPeers
            case .atClearance: atClearancePeers
            case .standingClose: standingClosePeers
            case .nearZone: nearZonePeers
            }
        }
    }

    /// What the engine did with one trace: contact times and zone changes (seconds), how far
    /// the filtered distance was from the truth after each reading (metres), and the true
    /// distance at each contact.
    struct Outcome {
        var contacts: [Double] = []
        var contactDistances: [Double] = []
        var zoneChanges: [Double] = []
        var errors: [Double] = []
    }

    /// Ranges along `trace` every `interval` (first round at a random phase) and feeds the engine
    /// what the bridge would: the board's whole centimetres and RSSI, corrected.
    static func run(
        _ trace: Trace, config: ProximityConfig, setup: RadioSetup, intervalMilliseconds: Int64, random: inout SplitMix64
    ) -> Outcome {
        var tracker = ProximityTracker(config: config)
        var outcome = Outcome()
        var channel = RadioModel.PairChannel()
        let offset = setup.offsetSpread * (2 * random.unit() - 1)
        let end = Int64(trace.duration * 1000)
        var time = Int64(random.unit() * Double(intervalMilliseconds))
        while time <= end {
            let t = Double(time) / 1000
            let truth = trace.distance(at: t)
            let reading = setup.radio.rangingReading(
                trueDistance: truth, time: t, boardOffsets: offset, channel: &channel, random: &random)
            let rssi = setup.reportsRSSI ? reading.map { $0.rssi + setup.rssiErrorDB } : nil
            let corrected = reading.map { setup.correction.correct(($0.metres * 100).rounded() / 100, rssi: rssi) }
            let sample = RangeSample(time: time, distance: corrected, nonLineOfSight: reading?.nonLineOfSight ?? false, rssi: rssi)
            for change in tracker.update(sample) {
                switch change {
                case .contact:
                    outcome.contacts.append(t)
                    outcome.contactDistances.append(truth)
                case .near, .far: outcome.zoneChanges.append(t)
                }
            }
            if let filtered = tracker.filtered { outcome.errors.append(abs(filtered - truth)) }
            time += intervalMilliseconds
        }
        return outcome
    }

    package static func run(
        setup: RadioSetup, config: ProximityConfig = .default, scale: Scale, seed: UInt64, intervalMilliseconds: Int64 = 100
    ) -> QualityFigures {
        var figures = QualityFigures(setup: setup)
        for (kindIndex, kind) in Trace.Kind.allCases.enumerated() {
            for index in 0..<scale.count(of: kind) {
                // The situation depends on the seed, kind and index only, so every setup sees the
                // same situations.
                var situation = SplitMix64(seed: seed ^ (UInt64(kindIndex) << 40) ^ UInt64(index))
                var generator = TraceGenerator(
                    seed: situation.next(), bumpMetres: config.bumpMetres, clearMetres: config.clearMetres,
                    nearMetres: config.nearMetres, farMetres: config.farMetres)
                let trace = generator.make(kind)
                var noise = SplitMix64(seed: situation.next())
                let outcome = run(trace, config: config, setup: setup, intervalMilliseconds: intervalMilliseconds, random: &noise)
                figures.record(trace, outcome, clearMetres: config.clearMetres)
            }
        }
        return figures
    }
}
