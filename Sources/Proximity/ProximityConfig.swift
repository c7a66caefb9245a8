/// Everything the proximity engine can be tuned with. Distances in metres, times in milliseconds.
///
/// The defaults are the measured configuration (docs/PROXIMITY.md, "Proximity quality"): on the
/// simulation's pessimistic DW3000-class radio (received-level bias corrected from RSSI, correlated
/// multipath, body shadowing) ranging every 100 ms they meet every quality target but "no decision
/// before contact is plausible". Only the three user-facing thresholds (`--near`, `--far`,
/// `--bump`) are on the command line.
package struct ProximityConfig: Sendable, Equatable {
    // MARK: Zones

    /// Enter the near zone when the filtered distance stays at or below this for `zoneDwell`.
    package var nearMetres: Double = 1.0
    /// Leave it when the filtered distance stays at or above this for `zoneDwell`; the gap to
    /// `nearMetres` is the hysteresis.
    package var farMetres: Double = 1.5
    /// How long a zone condition must hold before the zone changes, so one excursion of the
    /// filter across a threshold does not produce a near/far pair.
    package var zoneDwellMilliseconds: Int64 = 300
    /// How long the far condition must hold before a near peer is reported far: longer than a
    /// body-shadowing episode (1–5 s of readings 15–60 cm long), which must not flip the zone.
    package var farDwellMilliseconds: Int64 = 5_500

    // MARK: Contact (bump)

    /// Contact means the devices are this close or closer (earlier apps used 8 cm).
    package var bumpMetres: Double = 0.08
    /// Clearance: a peer this far away or farther is certainly not in contact. It is the other
    /// hypothesis of the contact test, and separating beyond it re-arms the detector.
    package var clearMetres: Double = 0.30
    /// Seen at or beyond this distance shortly before (`approachWindow`, or eight rounds if they
    /// are longer), a peer is making an approach, and contact needs less evidence
    /// (`evidenceAfterApproach`).
    package var approachMetres: Double = 0.5
    package var approachWindowMilliseconds: Int64 = 2_500
    /// Evidence (natural log-likelihood ratio of "within `bumpMetres`" against "a hand-over at
    /// `handOverMetres`", range and received level together) that fires a contact right after an
    /// approach. Lower is faster and less certain.
    package var evidenceAfterApproach: Double = 4
    /// Evidence needed otherwise: a peer lingering close (a neighbour at a table) gets many chances
    /// for noise to look like contact, so it must show more.
    package var evidenceWhileLingering: Double = 14
    /// The alternative the contact test weighs each reading against is a hand-over this much
    /// beyond the bump threshold (12 cm with the default 8). Correlated multipath keeps a reading
    /// wrong for the whole of a hold, so the test must put its midpoint between contact and the
    /// hand-overs it has to reject.
    package var handOverMarginMetres: Double = 0.04
    /// The hand-over distance the contact test weighs against.
    package var handOverMetres: Double { bumpMetres + handOverMarginMetres }
    /// The margin for readings that come without a received level (UCI 1.1 boards, firmware that
    /// ignores RSSI_REPORTING). With nothing to veto a hand-over, the test trades hand-over
    /// rejection for recall: a board that cannot bump is useless, and under the model's correlated
    /// multipath no margin gives both (docs/PROXIMITY.md, "Bump without a level").
    package var rangeOnlyHandOverMarginMetres: Double = 0.23
    package var rangeOnlyHandOverMetres: Double { bumpMetres + rangeOnlyHandOverMarginMetres }
    /// Evidence that fires a contact from readings without a level after an approach; without an
    /// approach they never fire one (infinity): a lingering neighbour at 30 cm reads like a touch
    /// now and then, and only the level could tell.
    package var rangeOnlyEvidenceAfterApproach: Double = 5
    package var rangeOnlyEvidenceWhileLingering: Double = .infinity
    /// Without a level, an approach is the filtered distance falling this far within
    /// `approachWindow` (a descent, so that a board's uncalibrated offset does not hide it).
    package var rangeOnlyApproachDescentMetres: Double = 0.4
    /// Received level: what a board receives at 1 m (the engine learns each peer's own offset
    /// from it, between 0.3 and 3 m), how far one reading's level wanders (slow fading plus
    /// measurement noise, dB), and the most one reading's level may add to the contact evidence
    /// (a saturated receiver reads the same at 3 cm as at 10): the level mostly vetoes.
    package var levelAtOneMetreDBm: Double = -63
    package var levelSigmaDB: Double = 3.6
    package var levelEvidenceCap: Double = 4
    /// The level at which the board's RSSI saturates (dBm): a saturated reading counts the whole
    /// cap towards contact, unless this peer is loud enough to saturate at a hand-over too.
    package var levelCeilingDBm: Double = -35

    // MARK: Nearest peer

    /// Band edges beyond `clearMetres` (immediate) and `nearMetres` (near): medium up to this, far beyond.
    package var mediumMetres: Double = 3.0
    /// The nearest peer's band changes only once its distance is this fraction beyond an edge.
    package var bandHysteresis: Double = 0.1
    /// Another peer takes over as nearest only when it is this much closer, so two people at about
    /// the same distance do not take turns.
    package var nearestSwitchMetres: Double = 0.2

    // MARK: Filter

    /// Standard deviation of one line-of-sight reading (the radio's ranging noise).
    package var rangingSigmaMetres: Double = 0.10
    /// NLoS readings read long; the filter trusts them this many times less (in σ).
    package var nlosSigmaFactor: Double = 3
    /// White-noise acceleration of the distance (m²/s³): how quickly hands and walkers can change
    /// speed. Larger follows motion faster and smooths less.
    package var accelerationNoise: Double = 0.2
    /// A reading more than this many standard deviations above the prediction is an outlier:
    /// NLoS and multipath make readings long, never short.
    package var gateAboveSigmas: Double = 2.5
    /// Below the prediction only Gaussian noise is expected, so a reading far below means the
    /// estimate is off (it followed an outlier, or the peer moved during a dropout): the gate is
    /// wide there and the reading pulls the estimate back.
    package var gateBelowSigmas: Double = 5
    /// This many rejected readings in a row that lie on a line mean the peer really moved:
    /// restart the filter on that line. Twice as many restart it whatever they look like.
    package var outliersBeforeRestart: Int = 3
    /// Without a reading for this long the estimate is dropped (the peer may be anywhere).
    package var maxGapMilliseconds: Int64 = 2_000

    package init(nearMetres: Double = 1.0, farMetres: Double = 1.5, bumpMetres: Double = 0.08) {
        self.nearMetres = nearMetres
        self.farMetres = farMetres
        self.bumpMetres = bumpMetres
    }

    package static let `default` = ProximityConfig()

    /// What is wrong with this configuration, in words a user can act on; empty when it is usable.
    package var problems: [String] {
        var problems: [String] = []
        if !(nearMetres > 0) { problems.append("the near threshold must be positive (e.g. 1.0)") }
        if !(farMetres > nearMetres) { problems.append("the far threshold must be larger than the near threshold (e.g. near 1.0, far 1.5)") }
        if !(bumpMetres > 0 && bumpMetres <= clearMetres - 0.1) {
            problems.append("the bump threshold must be between 0 and \(Self.format(clearMetres - 0.1)) m (e.g. 0.08)")
        }
        return problems
    }

    private static func format(_ metres: Double) -> String {
        String(Double(Int((metres * 100).rounded())) / 100)
    }
}
