import Proximity
import Synchronization
import UCI

/// Notices a board that reads short by more than the correction explains: an uncalibrated
/// antenna delay. Touching devices read about 0 after correction, noise and multipath taking
/// some of them below; a board 10 cm short or more puts half of them under −8 cm.
///
/// Judged over many close readings (several touches): multipath stays for the whole of one touch,
/// so a single touch of a calibrated board can read 7 cm short throughout.
struct CalibrationWatch: Sendable {
    private(set) var closeReadings = 0
    private(set) var belowContact = 0
    private(set) var hasWarned = false

    /// Readings closer than 30 cm looked at before judging, the level counted as below contact,
    /// and the share of them there that makes a board look uncalibrated (about 15 % on a
    /// calibrated board in the realistic simulation).
    static let minimumCloseReadings = 300
    static let belowContactMetres = -0.08
    static let suspiciousShare = 0.4

    /// Feeds one corrected line-of-sight reading; true once, when the board first looks
    /// uncalibrated.
    mutating func add(corrected metres: Double) -> Bool {
        guard metres < 0.30, !hasWarned else { return false }
        closeReadings += 1
        if metres < Self.belowContactMetres { belowContact += 1 }
        guard closeReadings >= Self.minimumCloseReadings,
            Double(belowContact) >= Self.suspiciousShare * Double(closeReadings)
        else { return false }
        hasWarned = true
        return true
    }
}
