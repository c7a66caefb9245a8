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

/// The line-of-sight received level of a board family against distance (free space, path-loss
/// exponent 2): what the contact test weighs a reported level against, and what the simulated
/// radio produces.
package struct LinkBudget: Sendable, Equatable, Codable {
    /// Received level at 1 m, dBm. −63 dBm puts APS011's zero-bias level (−77 dBm) at 5 m, as in
    /// the note's set-up; a board at full transmit power can receive up to 20 dB more (Qorvo forum
    /// reports −58 to −34 dBm at 1 m from a DWM3000 depending on TX power): each peer's own
    /// offset is learnt (`LevelOffset`).
    package var levelAtOneMetreDBm: Double = -63

    package init(levelAtOneMetreDBm: Double = -63) {
        self.levelAtOneMetreDBm = levelAtOneMetreDBm
    }

    /// Level at `metres` (1 cm at least: antennas touching are not at zero distance).
    package func level(atMetres metres: Double) -> Double {
        levelAtOneMetreDBm - 20 * log10(max(metres, 0.01))
    }
}

/// What the bridge does to each reading of one board.
///
/// The bias is looked up only at a level the board reported. Without one (UCI 1.1 range data,
/// firmware that ignores RSSI_REPORTING) nothing is guessed: a level taken from the distance
/// assumes the board has exactly the table's bias, and on a board that has not (its firmware
/// corrects it, or another family) it lifted a steady 3 cm touch to 14 cm, above the bump
/// threshold, so such boards stopped bumping (issue 29). Up close the table is flat (every level
/// above −61 dBm, i.e. within about 80 cm, has the same −11 cm), so a calibration taken without
/// RSSI absorbs the bias there into the board's offset; an uncalibrated board is read as it
/// reports.
package struct RangeCorrection: Sendable, Equatable {
    /// Bias table (nil: no bias correction) and the board's constant offset (antenna delay;
    /// metres read too long), from calibration.
    package var table: RangeBiasTable?
    package var tableName: String
    package var offsetMetres: Double
    /// Whether `offsetMetres` came from a calibration of this board.
    package var calibrated: Bool

    package init(table: RangeBiasTable?, tableName: String, offsetMetres: Double = 0, calibrated: Bool = false) {
        self.table = table
        self.tableName = tableName
        self.offsetMetres = offsetMetres
        self.calibrated = calibrated
    }

    /// No correction at all: readings pass through unchanged.
    package static let none = RangeCorrection(table: nil, tableName: "none")

    /// The corrected distance of a reading: the offset removed, and the bias looked up at the
    /// reported level when there is one.
    package func correct(_ reading: Double, rssi: Double?) -> Double {
        let withoutOffset = reading - offsetMetres
        guard let table, let rssi else { return withoutOffset }
        return withoutOffset - table.bias(atLevel: rssi)
    }

    /// What this correction does to a board's readings, in the words the `device` event and
    /// `doctor` use: for a board asked for RSSI (UCI 2.0: per round, whether it sent one), or for
    /// one that has none to send (UCI 1.x).
    package func policy(asksRSSI: Bool) -> String {
        let offset = calibrated ? "calibrated offset" : "no offset (uncalibrated)"
        let withLevel = table == nil ? "\(offset), no bias table" : "\(tableName) bias at the reported RSSI, \(offset)"
        let withoutLevel = "\(offset), no bias (none is guessed from the distance), bump from distance alone"
        guard asksRSSI else { return "no RSSI: \(withoutLevel)" }
        return "rounds with RSSI: \(withLevel), bump from distance and level; rounds without: \(withoutLevel)"
    }
}
