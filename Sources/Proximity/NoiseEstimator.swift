/// Estimates the ranging noise σ of one peer's readings, so the filter and the contact test use
/// the noise this radio and this room actually produce, not only the configured figure.
///
/// It looks at second differences of consecutive line-of-sight readings,
/// x₍ₖ₎ − 2x₍ₖ₋₁₎ + x₍ₖ₋₂₎: steady motion cancels out (walking at 1 m/s changes them by nothing,
/// accelerating hands by a centimetre or two), and for Gaussian noise they have σ·√6. Their mean
/// square over the last `window`, counting only those within 1.645 standard deviations of the
/// current estimate (90 % of them for Gaussian noise), ignores the occasional unflagged outlier
/// (each spoils three differences) while using most of the data; a median would be noisier, and
/// coarse with readings in whole centimetres. The cut depends on the estimate, so each refresh
/// repeats the two until they agree. The configured σ counts as `prior`
/// differences' worth of evidence, so a few seconds of data cannot swing the estimate far, and
/// the estimate never goes below the configured σ: a quiet stretch must not make the contact
/// test trust the radio beyond its specification.
///
/// Until about a minute of readings is in, the configured σ dominates: configure a radio known
/// to be noisier with its own σ, or its first minute with each peer is as error-prone as a
/// radio assumed too quiet (proximity-eval shows both).
struct NoiseEstimator: Sendable {
    private let floor: Double
    private var last: (time: Int64, distance: Double)?
    private var beforeLast: (time: Int64, distance: Double)?
    private var squares: [Double] = []
    private var next = 0
    private var newSinceEstimate = 0
    private(set) var sigma: Double
    /// The variance the data alone show, before the prior and the floor: it sets the cut.
    private var observedVariance: Double

    /// Second differences kept (a minute at 10 Hz); how many before the first estimate; the
    /// weight of the configured σ, in differences; and how many new ones between estimates.
    private static let window = 600
    private static let minimum = 50
    private static let prior = 50.0
    private static let refresh = 50
    /// The cut, in standard deviations, and the mean square of a standard normal variable within
    /// it: E[Z² | |Z| < 1.645] = 0.623.
    private static let cut = 1.645
    private static let meanSquareWithinCut = 0.623
    private static let maxIterations = 10

    init(config: ProximityConfig) {
        floor = config.rangingSigmaMetres
        sigma = floor
        observedVariance = floor * floor
    }

    /// Feeds one line-of-sight reading. Readings must be one ranging interval apart to form a
    /// second difference; a missing round starts a new run.
    mutating func add(time: Int64, distance: Double) {
        defer {
            beforeLast = last
            last = (time, distance)
        }
        guard let last, let beforeLast, time - last.time == last.time - beforeLast.time else { return }
        let difference = distance - 2 * last.distance + beforeLast.distance
        if squares.count < Self.window {
            squares.append(difference * difference)
        } else {
            squares[next] = difference * difference
            next = (next + 1) % Self.window
        }
        newSinceEstimate += 1
        guard squares.count >= Self.minimum, newSinceEstimate >= Self.refresh else { return }
        newSinceEstimate = 0
        for _ in 0..<Self.maxIterations {
            let limit = Self.cut * Self.cut * 6 * observedVariance
            var sum = 0.0
            var kept = 0
            for square in squares where square <= limit {
                sum += square
                kept += 1
            }
            guard kept > 0 else { break }
            let previous = observedVariance
            observedVariance = sum / Double(kept) / (6 * Self.meanSquareWithinCut)
            if abs(observedVariance - previous) <= 0.01 * previous { break }
        }
        let count = Double(squares.count)
        let variance = (Self.prior * floor * floor + count * observedVariance) / (Self.prior + count)
        sigma = max(floor, variance.squareRoot())
    }

    /// A failed or NLoS round breaks the run of consecutive readings.
    mutating func skip() {
        last = nil
        beforeLast = nil
    }
}
