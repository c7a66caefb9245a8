/// Bump detection: contact as a gesture (an approach, contact, usually a separation), decided by a
/// sequential likelihood-ratio test on the raw readings.
///
/// Why not a threshold on a filtered distance: with σ = 10 cm, any filter quick enough to see a
/// brief touch within a ranging interval or two dips from 30 cm to below 8 cm by chance dozens of
/// times per hour. The test here accumulates evidence instead (a CUSUM): each line-of-sight
/// reading x adds its log-likelihood ratio of "at `bump`" against "at `clear`",
/// `(clear − bump)/σ² · ((bump + clear)/2 − x)`, the sum never drops below zero, and contact fires
/// when it reaches a threshold. Readings during the last few centimetres of an approach already
/// count, a single lucky reading never suffices, and the threshold is a false-alarm rate:
/// lingering at 30 cm, the sum reaches `evidence` about once per e^evidence readings.
///
/// A visible approach (the filtered distance was at `approach` or farther within
/// `approachWindow`) lowers the threshold: that is what a bump looks like, while a neighbour
/// sitting 30 cm away for hours gets a stricter test. NLoS-flagged readings are left out (they read long, and a blocked path is
/// not contact). One contact per gesture: after firing, the same test run the other way must show
/// the devices apart (at `clear` rather than at `bump`, with `evidenceAfterApproach`) before the
/// detector re-arms, so devices left together for minutes bump once.
struct ContactDetector: Sendable {
    private let config: ProximityConfig
    /// Evidence for contact while armed; for separation after a contact.
    private var evidence = 0.0
    private(set) var isArmed = true
    private var lastApproachSeen: Int64?
    /// The filtered distances of the last `approachWindow`, as a sliding maximum (each entry
    /// larger than every later one): how far the peer came from, whatever the board's offset.
    /// Each is the least of three rounds in a row, so that the filter's excursion on one or two
    /// noisy readings is not taken for where the peer stood.
    private var recentPeaks: [(time: Int64, distance: Double)] = []
    private var lastFiltered: (Double, Double) = (0, 0)
    private var lastReading: Int64?
    /// When the last round came (a reading or not), and the time between rounds: the
    /// approach window spans at least `approachRounds` rounds, since evidence gathers per
    /// reading. At 100 ms a round, 2.5 s is 25 of them; a phone ranging every 600 ms (Android's
    /// infrequent rate) had four, and a 4 s touch often gathered too little evidence within
    /// them. Eight bump every touch of `SlowRoundsContactTests` (sixty seeds tried; six still
    /// missed three in ten); rounds up to 312 ms keep the 2.5 s.
    private var lastRound: Int64?
    /// The last two gaps between rounds; the smaller is the round's length, so that one gap of
    /// lost rounds does not stretch the window.
    private var roundGaps: (Int64, Int64) = (0, 0)
    static let approachRounds: Int64 = 8
    /// The link budget's levels at contact, at a hand-over and at the clearance (dBm), which the
    /// received level is weighed between.
    private let levelAtContact: Double
    private let levelAtHandOver: Double
    private let levelAtClearance: Double

    init(config: ProximityConfig) {
        self.config = config
        let budget = LinkBudget(levelAtOneMetreDBm: config.levelAtOneMetreDBm)
        levelAtContact = budget.level(atMetres: config.bumpMetres)
        levelAtHandOver = budget.level(atMetres: config.handOverMetres)
        levelAtClearance = budget.level(atMetres: config.clearMetres)
    }

    /// Feeds one round: its reading, the noise σ of readings, and the filtered distance (which
    /// tells, robustly, whether the peer was recently far enough away for an approach). Returns
    /// true when this reading completes a contact.
    mutating func update(
        time: Int64, distance: Double?, nonLineOfSight: Bool, sigma: Double, filtered: Double?, level: Double? = nil,
        saturated: Bool = false
    ) -> Bool {
        if let lastRound { roundGaps = (roundGaps.1, min(max(0, time - lastRound), config.maxGapMilliseconds)) }
        lastRound = time
        let approachWindow = max(config.approachWindowMilliseconds, Self.approachRounds * min(roundGaps.0, roundGaps.1))
        if let filtered {
            if filtered >= config.approachMetres { lastApproachSeen = time }
            let held = min(filtered, lastFiltered.0, lastFiltered.1)
            lastFiltered = (lastFiltered.1, filtered)
            while let last = recentPeaks.last, last.distance <= held { recentPeaks.removeLast() }
            recentPeaks.append((time, held))
        }
        while let first = recentPeaks.first, time - first.time > approachWindow { recentPeaks.removeFirst() }
        guard let distance, !nonLineOfSight else { return false }
        if let last = lastReading, time - last > config.maxGapMilliseconds { evidence = 0 }
        lastReading = time

        let (bump, clear) = (config.bumpMetres, config.clearMetres)
        guard isArmed else {
            // Re-arm once the readings show the devices apart with the same confidence, and the
            // filtered distance agrees. Readings beyond the clearance count as at the clearance,
            // and the filter ignores a body stepping in between, so neither a few multipath
            // outliers nor a shadowing episode while the devices lie together make up a separation.
            let weight = (clear - bump) / (sigma * sigma)
            var apart = weight * (min(distance, clear) - (bump + clear) / 2)
            // A body between devices that lie together lowers the level by a few dB only: still
            // far louder than at 20 cm.
            if let level { apart -= levelEvidence(level, against: levelAtClearance, cap: 4 * config.levelEvidenceCap) }
            evidence = max(0, evidence + apart)
            if evidence >= config.evidenceAfterApproach, (filtered ?? 0) >= clear {
                isArmed = true
                evidence = 0
            }
            return false
        }
        // Readings far beyond the alternative are capped: one unflagged outlier must not wipe
        // out the evidence gathered so far, and past 2σ beyond it a reading says nothing new.
        // Without a level the distance is all there is, and under correlated multipath an
        // alternative just beyond contact would reject most touches: it moves out.
        let alternative = level == nil ? config.rangeOnlyHandOverMetres : config.handOverMetres
        let weight = (alternative - bump) / (sigma * sigma)
        var forContact = weight * ((bump + alternative) / 2 - min(distance, alternative + 2 * sigma))
        // A saturated receiver says "closer than a hand-over" more strongly than the linear ratio
        // of the clipped value: a hand-over almost never reaches the ceiling.
        if let level {
            forContact += saturated ? config.levelEvidenceCap : levelEvidence(level, against: levelAtHandOver, cap: config.levelEvidenceCap)
        }
        evidence = max(0, evidence + forContact)
        let approaching: Bool
        if level == nil {
            // Without a level the readings may carry an uncalibrated offset of tens of
            // centimetres: an approach is a descent of the filtered distance, not a distance.
            approaching = (recentPeaks.first?.distance ?? 0) - (filtered ?? .infinity) >= config.rangeOnlyApproachDescentMetres
        } else {
            approaching = lastApproachSeen.map { time - $0 <= approachWindow } ?? false
        }
        let needed =
            level == nil
            ? (approaching ? config.rangeOnlyEvidenceAfterApproach : config.rangeOnlyEvidenceWhileLingering)
            : (approaching ? config.evidenceAfterApproach : config.evidenceWhileLingering)
        // Without a level, the reading that completes a contact must itself say contact: evidence
        // gathered at a touch that went unnoticed is not spent on the way out, nor a run of
        // short readings on the way in by one that is not.
        guard evidence >= needed, level != nil || forContact > 0 else { return false }
        consume()
        return true
    }

    /// The received level's log-likelihood ratio of contact against devices apart at the level
    /// `atAlternative`:
    /// 20 dB per decade of distance, so a touch receives about 8 dB more than a hand-over at 20 cm.
    /// Capped below (one deep fade is not proof) and above at `cap`: towards contact a saturated
    /// receiver cannot tell 3 cm from 10, and fading is slow, so one loud gesture must not count
    /// many times; against a separation (re-arming) a loud level may count more.
    private func levelEvidence(_ level: Double, against atAlternative: Double, cap: Double) -> Double {
        let variance = config.levelSigmaDB * config.levelSigmaDB
        let ratio = (levelAtContact - atAlternative) / variance * (level - (levelAtContact + atAlternative) / 2)
        return min(max(ratio, -4 * config.levelEvidenceCap), cap)
    }

    /// Ends the current gesture without a contact of our own (the peer saw it first).
    mutating func consume() {
        isArmed = false
        evidence = 0
    }
}
