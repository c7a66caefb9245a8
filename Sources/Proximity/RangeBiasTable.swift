import Glibc

/// How far a UWB reading is off as a function of the received signal level, and the constant
/// offset of one board: what the bridge subtracts from each reading before the proximity engine
/// sees it.
///
/// Why: a DW1000/DW3000 receiver times the leading edge of strong signals early and of weak ones
/// late (Decawave APS011, "Sources of error in DW1000 based two-way ranging schemes", §3 and
/// Table 2). Close devices receive strong signals, so an uncorrected board reads about 10 cm short
/// below a metre: exactly where a touch must be told from a hand-over at 15 cm.
package struct RangeBiasTable: Sendable, Equatable, Codable {
    /// (received level in dBm, bias in metres: reported minus true distance), by rising level.
    package var points: [Point]

    package struct Point: Sendable, Equatable, Codable {
        package var levelDBm: Double
        package var biasMetres: Double

        package init(levelDBm: Double, biasMetres: Double) {
            self.levelDBm = levelDBm
            self.biasMetres = biasMetres
        }
    }

    package init(points: [Point]) {
        self.points = points.sorted { $0.levelDBm < $1.levelDBm }
    }

    /// APS011 Table 2, 64 MHz PRF, 500 MHz bandwidth (channels 1–3, 5; the DW3000's channels 5
    /// and 9 are 500 MHz wide too): −95 dBm +8.6 cm … −77 dBm 0 … −61 dBm −11.0 cm, every 2 dB.
    /// Beyond the table the bias is taken as constant (the note gives nothing stronger than −61).
    package static let aps011PRF64 = RangeBiasTable(
        points: zip(stride(from: -61.0, through: -95.0, by: -2.0), [-110, -105, -100, -93, -82, -69, -51, -27, 0, 21, 35, 42, 49, 62, 71, 76, 81, 86])
            .map { Point(levelDBm: $0, biasMetres: Double($1) / 1000) })

    /// The bias at `level`, linearly interpolated, constant beyond the ends.
    package func bias(atLevel level: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 0 }
        if level <= first.levelDBm { return first.biasMetres }
        if level >= last.levelDBm { return last.biasMetres }
        let upper = points.firstIndex { $0.levelDBm >= level }!
        let (a, b) = (points[upper - 1], points[upper])
        return a.biasMetres + (b.biasMetres - a.biasMetres) * (level - a.levelDBm) / (b.levelDBm - a.levelDBm)
    }
}
