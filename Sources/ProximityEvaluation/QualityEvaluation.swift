import Bridge
import Proximity
import Simulation

/// One way of ranging the evaluation measures: how the radio and the board behave and what the
/// bridge does about it (a row of the table).
package struct RadioSetup: Sendable {
    package var name: String
    package var radio: RadioModel
    /// What is subtracted from each reading.
    package var correction: Correction
    /// Whether the board reports RSSI (the correction then looks the bias up at it, and the
    /// contact test weighs it).
    package var reportsRSSI: Bool
    /// How far the board's RSSI is off (dB, added to every reported level): a board whose level
    /// is miscalibrated by a constant.
    package var rssiErrorDB: Double
    /// Both boards' uncalibrated antenna-delay offset, drawn per situation within ± this (m).
    package var offsetSpread: Double
    /// Whether the quality targets apply to this row.
    package var targeted: Bool

    /// What the bridge does to a reading: its `RangeCorrection`, or (a negative control) the
    /// correction of 2026-11-25, which looked the bias up at a level derived from the distance
    /// when the board reported none.
    package enum Correction: Sendable {
        case bridge(RangeCorrection)
        case levelFromDistance(RangeBiasTable)

        func correct(_ reading: Double, rssi: Double?) -> Double {
            switch self {
            case .bridge(let correction): return correction.correct(reading, rssi: rssi)
            case .levelFromDistance(let table):
                if let rssi { return reading - table.bias(atLevel: rssi) }
                var estimate = reading
                for _ in 0..<3 { estimate = reading - table.bias(atLevel: LinkBudget().level(atMetres: estimate)) }
                return estimate
            }
        }
    }

    package init(
        name: String, radio: RadioModel = RadioModel(), correction: Correction = .bridge(.dw3000), reportsRSSI: Bool,
        rssiErrorDB: Double = 0, offsetSpread: Double = 0, targeted: Bool
    ) {
        self.name = name
        self.radio = radio
        self.correction = correction
        self.reportsRSSI = reportsRSSI
        self.rssiErrorDB = rssiErrorDB
        self.offsetSpread = offsetSpread
        self.targeted = targeted
    }

    /// The realistic radio (RadioModel's defaults), bias corrected from RSSI, calibrated boards.
    package static let realistic = RadioSetup(name: "RSSI reported, calibrated", reportsRSSI: true, targeted: true)
    /// Boards whose RSSI reads a constant too high or too low (transmit power, antenna, firmware).
    package static let rssiTooHigh = RadioSetup(
        name: "RSSI reported 6 dB too high, calibrated", reportsRSSI: true, rssiErrorDB: 6, targeted: true)
    package static let rssiTooLow = RadioSetup(
        name: "RSSI reported 6 dB too low, calibrated", reportsRSSI: true, rssiErrorDB: -6, targeted: true)
    /// A board that reports no RSSI (UCI 1.1 range data), calibrated: `nearby-bridge calibrate`
    /// without RSSI filed the offset that takes the near-field bias with it.
    package static let withoutRSSI = RadioSetup(
        name: "no RSSI (UCI 1.1 layout), calibrated",
        correction: .bridge(
            RangeCorrection(
                table: .aps011PRF64, tableName: "aps011-prf64", offsetMetres: calibrationWithoutRSSI(RadioModel()), calibrated: true)),
        reportsRSSI: false, targeted: true)
    /// The same board never calibrated: its bias and ±15 cm of antenna delay per pair in every reading.
    package static let withoutRSSIUncalibrated = RadioSetup(
        name: "no RSSI, uncalibrated (its bias and ±15 cm per pair as reported)", reportsRSSI: false, offsetSpread: 0.15,
        targeted: true)
    /// A board without RSSI whose firmware corrects its own bias (the board: a touch reads
    /// 3 cm), uncalibrated.
    package static let withoutRSSISelfCorrecting = RadioSetup(
        name: "no RSSI, firmware corrects its bias, uncalibrated", radio: selfCorrectingBoard, reportsRSSI: false,
        targeted: true)
    /// Negative control: that board under the correction of 2026-11-25 (bias at a level derived
    /// from the distance): touches read 11 cm long.
    package static let withoutRSSILevelFromDistance = RadioSetup(
        name: "no RSSI, firmware corrects its bias, bias guessed from distance (before issue 29)", radio: selfCorrectingBoard,
        correction: .levelFromDistance(.aps011PRF64), reportsRSSI: false, targeted: false)
    private static let selfCorrectingBoard: RadioModel = {
        var radio = RadioModel()
        radio.levelBias = .none
        return radio
    }()
    /// Boards with RSSI whose antenna delays were never calibrated: ±15 cm per pair.
    package static let uncalibrated = RadioSetup(
        name: "RSSI reported, uncalibrated (±15 cm)", reportsRSSI: true, offsetSpread: 0.15, targeted: false)
    /// No bias correction on the biased radio: a negative control.
    package static let uncorrected = RadioSetup(
        name: "RSSI reported, not corrected", correction: .bridge(.none), reportsRSSI: true, targeted: false)

    package static let all: [RadioSetup] = [
        realistic, rssiTooHigh, rssiTooLow, withoutRSSI, withoutRSSIUncalibrated, withoutRSSISelfCorrecting,
        withoutRSSILevelFromDistance, uncalibrated, uncorrected,
    ]

    /// The offset `nearby-bridge calibrate` files for a board without RSSI on `radio` (its default
    /// steps: touching, 2 cm, and 1.00 m; no bias is looked up without a level): the mean of
    /// reading minus truth at both, without noise. A calibrated board with RSSI files 0 here.
    package static func calibrationWithoutRSSI(_ radio: RadioModel) -> Double {
        guard radio.levelBias == .aps011 else { return 0 }
        let budget = LinkBudget(levelAtOneMetreDBm: radio.levelAtOneMetre)
        return [0.02, 1.0].map { RangeBiasTable.aps011PRF64.bias(atLevel: budget.level(atMetres: $0)) }.reduce(0, +) / 2
    }
}

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
