/// Estimates the ranging noise σ of one peer's readings, so the filter and the contact test use
/// the noise this radio and this room actually produce, not only the configured figure.
///
/// It looks at second differences of consecutive line-of-sight readings,
/// x₍ₖ₎ − 2x₍ₖ₋₁₎ + x₍ₖ₋₂₎: steady motion cancels out (walking at 1 m/s changes them by nothing,
/// accelerating hands by a centimetre or two), and for Gaussian noise they have σ·√6. Their mean
/// square over the last `window`, leaving out the largest tenth, ignores the occasional unflagged
/// outlier (each spoils three differences) while using most of the data (a median would be
/// noisier, and coarse with readings in whole centimetres). The configured σ counts as `prior`
/// differences' worth of evidence, so a few seconds of data cannot swing the estimate far, and
/// the estimate never goes below the configured σ: a quiet stretch must not make the contact
/// test trust the radio more than its specification.
struct NoiseEstimator: Sendable {
    private let floor: Double
    private var last: (time: Int64, distance: Double)?
    private var beforeLast: (time: Int64, distance: Double)?
    private var squares: [Double] = []
    private var next = 0
    private var newSinceEstimate = 0
    private(set) var sigma: Double

    /// Second differences kept (a minute at 10 Hz); how many before the first estimate (enough
    /// that trimming a tenth removes all three differences an outlier spoils); the weight of the
    /// configured σ, in differences; and how many new ones between estimates.
    private static let window = 600
    private static let minimum = 50
    private static let prior = 100.0
    private static let refresh = 50
    /// The share of the largest differences left out, and the mean square of a standard normal
    /// variable without its largest tenth: E[Z² | |Z| < 1.645] = 0.623.
    private static let trimmed = 0.1
    private static let trimmedMeanSquare = 0.623

    init(config: ProximityConfig) {
        floor = config.rangingSigmaMetres
        sigma = floor
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
        let kept = squares.sorted().dropLast(Int(Double(squares.count) * Self.trimmed))
        let observed = kept.reduce(0, +) / Double(kept.count) / (6 * Self.trimmedMeanSquare)
        let count = Double(squares.count)
        let variance = (Self.prior * floor * floor + count * observed) / (Self.prior + count)
        sigma = max(floor, variance.squareRoot())
    }

    /// A failed or NLoS round breaks the run of consecutive readings.
    mutating func skip() {
        last = nil
        beforeLast = nil
    }
}
