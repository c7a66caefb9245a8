import Glibc

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
