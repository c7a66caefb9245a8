/// A constant-velocity Kalman filter on one peer's distance: estimates distance and its rate of
/// change from noisy, gappy readings.
///
/// Why a state estimator rather than a median: it follows a moving hand without the lag of a
/// window, it carries the estimate through missing rounds (prediction, with growing uncertainty),
/// and its uncertainty tells outliers apart from motion. Errors come in two kinds: Gaussian noise
/// both ways (σ from `NoiseEstimator`), and readings far too long (NLoS, multipath). So
/// NLoS-flagged readings count with a larger variance, and the gate is tight above the prediction
/// and wide below it.
///
/// A rejected reading also halves the estimated rate and makes it uncertain again: when readings
/// disagree with the predicted motion, the motion is the doubtful part (a walker passing by turns
/// from approaching to receding within a second), and extrapolating it would carry the estimate
/// away from the truth. Rejected readings that lie on a line (a peer that really moved: passed
/// by, or moved during a dropout) restart the filter on that line; outliers scatter and do not.
struct RangeFilter: Sendable {
    struct Estimate: Sendable, Equatable {
        /// Metres; can dip below zero at contact (readings there are biased low).
        var distance: Double
        /// Metres per second; negative while the peer approaches.
        var rate: Double
    }

    private let config: ProximityConfig
    private var estimate: Estimate?
    /// Covariance of (distance, rate).
    private var pdd = 0.0, pdr = 0.0, prr = 0.0
    private var lastUpdate: Int64 = 0
    private var lastReading: Int64 = 0
    /// The current run of rejected readings: (time, metres).
    private var rejected: [(time: Int64, distance: Double)] = []
    private var noiseVariance: Double

    /// After a rejection the rate is this uncertain ((m/s)²), so the next readings set it afresh.
    private static let doubtfulRateVariance = 0.25

    init(config: ProximityConfig) {
        self.config = config
        noiseVariance = config.rangingSigmaMetres * config.rangingSigmaMetres
    }

    /// The current estimate, or nil before the first reading and after `maxGap` without one.
    var current: Estimate? { estimate }

    /// Advances to `time` and folds in `distance` (nil when the round failed), whose
    /// line-of-sight noise is `noiseSigma`.
    mutating func update(time: Int64, distance: Double?, nonLineOfSight: Bool, noiseSigma: Double) {
        noiseVariance = noiseSigma * noiseSigma
        if estimate != nil, time - lastReading > config.maxGapMilliseconds {
            estimate = nil
            rejected = []
        }
        guard var x = estimate else {
            if let distance { start(at: distance, time: time) }
            return
        }
        let dt = Double(max(0, time - lastUpdate)) / 1000
        lastUpdate = time
        // Predict: x += v·dt; P = F P Fᵀ + Q for white-noise acceleration q.
        let q = config.accelerationNoise
        x.distance += x.rate * dt
        pdd += 2 * dt * pdr + dt * dt * prr + q * dt * dt * dt / 3
        pdr += dt * prr + q * dt * dt / 2
        prr += q * dt
        estimate = x
        guard let distance else { return }

        let factor = nonLineOfSight ? config.nlosSigmaFactor : 1
        let s = pdd + factor * factor * noiseVariance
        let innovation = distance - x.distance
        let gate = innovation > 0 ? config.gateAboveSigmas : config.gateBelowSigmas
        guard innovation * innovation <= gate * gate * s else {
            rejected.append((time, distance))
            if let line = lineThroughRejected(),
                rejected.count >= 2 * config.outliersBeforeRestart
                    || (rejected.count >= config.outliersBeforeRestart && line.fits)
            {
                start(at: line.end, time: time)
                estimate?.rate = line.rate
            } else {
                estimate?.rate /= 2
                prr = max(prr, Self.doubtfulRateVariance)
            }
            return
        }
        rejected = []
        lastReading = time
        let kd = pdd / s
        let kr = pdr / s
        x.distance += kd * innovation
        x.rate += kr * innovation
        (pdd, pdr, prr) = ((1 - kd) * pdd, (1 - kd) * pdr, prr - kr * pdr)
        estimate = x
    }

    private mutating func start(at distance: Double, time: Int64) {
        estimate = Estimate(distance: distance, rate: 0)
        // Rate unknown: people rarely move faster than about 1 m/s.
        (pdd, pdr, prr) = (noiseVariance, 0, Self.doubtfulRateVariance)
        lastUpdate = time
        lastReading = time
        rejected = []
    }

    /// The line through the rejected run: the median of the pairwise slopes (Theil–Sen), so one
    /// outlier cannot tilt it, its value at the last reading, and whether every reading lies
    /// within 2.5σ of it (a peer that moved gives readings on a line; outliers scatter).
    private func lineThroughRejected() -> (rate: Double, end: Double, fits: Bool)? {
        guard let first = rejected.first, let last = rejected.last else { return nil }
        let run = rejected.map { (t: Double($0.time - first.time) / 1000, d: $0.distance) }
        var slopes: [Double] = []
        for (i, a) in run.enumerated() {
            for b in run[(i + 1)...] where b.t > a.t { slopes.append((b.d - a.d) / (b.t - a.t)) }
        }
        let rate = slopes.isEmpty ? 0 : slopes.sorted()[slopes.count / 2]
        let endTime = Double(last.time - first.time) / 1000
        let ends = run.map { $0.d + rate * (endTime - $0.t) }.sorted()
        let end = ends[ends.count / 2]
        let tolerance = 2.5 * noiseVariance.squareRoot()
        return (rate, end, ends.allSatisfy { abs($0 - end) <= tolerance })
    }
}
