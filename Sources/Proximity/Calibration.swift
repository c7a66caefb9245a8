/// Computes a board's constant offset (antenna delay) from readings taken at known distances, and
/// refuses when the readings cannot support one. Pure: `nearby-bridge calibrate` collects the
/// readings and files the result.
///
/// Each step's readings are corrected for the received-level bias (the table in force), and the
/// step's offset is the median of reading minus true distance: robust to the NLoS rounds and
/// outliers that slip through. The steps must agree: a board whose readings do not follow the
/// table (its firmware corrects the bias already, or the table is for another family) gives
/// offsets that differ with distance, and a single offset would then be wrong somewhere. Several
/// steps at one distance are placements at different spots, averaged before that comparison.
package enum Calibration {
    /// One reading as the board reported it.
    package struct Reading: Sendable, Equatable {
        package var metres: Double
        package var rssi: Double?
        package var nonLineOfSight: Bool

        package init(metres: Double, rssi: Double?, nonLineOfSight: Bool) {
            self.metres = metres
            self.rssi = rssi
            self.nonLineOfSight = nonLineOfSight
        }
    }

    /// The readings taken with the devices `trueMetres` apart (antenna to antenna).
    package struct Step: Sendable, Equatable {
        package var trueMetres: Double
        package var readings: [Reading]

        package init(trueMetres: Double, readings: [Reading]) {
            self.trueMetres = trueMetres
            self.readings = readings
        }
    }

    /// What one step showed.
    package struct StepResult: Sendable, Equatable {
        package var trueMetres: Double
        /// Line-of-sight readings used.
        package var readings: Int
        /// Median of corrected reading minus true distance, metres.
        package var offset: Double
        /// Robust spread of the corrected readings (1.4826 × median absolute deviation), metres.
        package var spread: Double
        /// Median reported level, dBm (nil: the board reports none).
        package var rssi: Double?
        /// The offset the same readings give without the bias table, for comparison.
        package var offsetWithoutTable: Double
    }

    package struct Result: Sendable, Equatable {
        /// Metres the board reads too long; the bridge subtracts it.
        package var offset: Double
        package var steps: [StepResult]
        /// The distances measured, in the order first measured.
        package var distances: [Double] { Calibration.distinctDistances(of: steps) }
    }

    package enum Refusal: Error, Equatable, CustomStringConvertible {
        case tooFew(trueMetres: Double, readings: Int, needed: Int)
        case tooNoisy(trueMetres: Double, spread: Double, limit: Double)
        case inconsistent(offsets: [Double], limit: Double, withoutTable: [Double])
        case tooLarge(offset: Double, limit: Double)
        case needsTwoDistances

        package var description: String {
            switch self {
            case .tooFew(let d, let n, let needed):
                "only \(n) line-of-sight readings at \(cm(d)) (need \(needed)): is the peer ranging, and nothing between the devices?"
            case .tooNoisy(let d, let spread, let limit):
                "readings at \(cm(d)) spread \(cm(spread)) (at most \(cm(limit))): hold both devices still, away from bodies and metal"
            case .inconsistent(let offsets, let limit, let withoutTable):
                "the distances give offsets \(offsets.map(cm).joined(separator: ", ")), more than \(cm(limit)) apart, so no single offset fits;"
                    + " without the bias table they would be \(withoutTable.map(cm).joined(separator: ", "))"
                    + " (if those agree, the firmware corrects the bias itself: set \"rangeBias\": \"none\")"
            case .tooLarge(let offset, let limit):
                "the offset came out at \(cm(offset)), beyond \(cm(limit)): were the distances right?"
            case .needsTwoDistances:
                "calibration needs readings at two distances at least (e.g. touching and 1.00 m)"
            }
        }
    }

    /// Line-of-sight readings needed per step, the largest spread accepted, how far the steps'
    /// offsets may differ, and the largest offset believed (antenna delays are worth tens of
    /// centimetres at most). The spread limit leaves room for a DW3000's own noise up close
    /// (6–9 cm with multipath; the median of 100 readings is still good to about a centimetre)
    /// and refuses hands waving or a body walking through (readings 15–60 cm long).
    package static let minimumReadings = 50
    package static let maximumSpread = 0.15
    package static let maximumDisagreement = 0.10
    package static let maximumOffset = 0.60

    package static func solve(_ steps: [Step], correction: RangeCorrection) throws(Refusal) -> Result {
        guard Set(steps.map(\.trueMetres)).count >= 2 else { throw .needsTwoDistances }
        var results: [StepResult] = []
        for step in steps {
            let lineOfSight = step.readings.filter { !$0.nonLineOfSight }
            guard lineOfSight.count >= minimumReadings else {
                throw .tooFew(trueMetres: step.trueMetres, readings: lineOfSight.count, needed: minimumReadings)
            }
            let corrected = lineOfSight.map { correction.correct($0.metres, rssi: $0.rssi) }
            let middle = median(corrected)
            let spread = 1.4826 * median(corrected.map { abs($0 - middle) })
            guard spread <= maximumSpread else { throw .tooNoisy(trueMetres: step.trueMetres, spread: spread, limit: maximumSpread) }
            let levels = lineOfSight.compactMap(\.rssi)
            results.append(
                StepResult(
                    trueMetres: step.trueMetres, readings: lineOfSight.count, offset: middle - step.trueMetres, spread: spread,
                    rssi: levels.isEmpty ? nil : median(levels),
                    offsetWithoutTable: median(lineOfSight.map(\.metres)) - step.trueMetres))
        }
        // Steps at the same distance are placements of the pair at different spots: their mean
        // averages one spot's multipath out; the distances are compared with each other.
        let distances = distinctDistances(of: results)
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }
        let offsets = distances.map { d in mean(results.filter { $0.trueMetres == d }.map(\.offset)) }
        let withoutTable = distances.map { d in mean(results.filter { $0.trueMetres == d }.map(\.offsetWithoutTable)) }
        guard let low = offsets.min(), let high = offsets.max(), high - low <= maximumDisagreement else {
            throw .inconsistent(offsets: offsets, limit: maximumDisagreement, withoutTable: withoutTable)
        }
        let offset = mean(offsets)
        guard abs(offset) <= maximumOffset else { throw .tooLarge(offset: offset, limit: maximumOffset) }
        return Result(offset: offset, steps: results)
    }

    static func distinctDistances(of steps: [StepResult]) -> [Double] {
        steps.map(\.trueMetres).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    private static func cm(_ metres: Double) -> String {
        "\(Int((metres * 100).rounded())) cm"
    }
}
