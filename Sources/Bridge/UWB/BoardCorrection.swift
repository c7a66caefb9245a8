import Proximity
import Synchronization
import UCI

/// The USB serial number in a transport's description ("usb:… serial X"), if it has one.
func usbSerial(inTransport description: String) -> String? {
    guard let range = description.range(of: " serial "), !description[range.upperBound...].isEmpty else { return nil }
    return String(description[range.upperBound...].prefix { $0 != " " })
}

/// The correction in force for the board the node has now: set at each bring-up (the board may
/// have been swapped during a replug), read by the registry once per batch of ranges.
final class BoardCorrection: Sendable {
    private let current: Mutex<RangeCorrection>

    init(_ initial: RangeCorrection) {
        current = Mutex(initial)
    }

    var correction: RangeCorrection {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}

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

/// Notices a board that measures but reports no received level (RSSI field 0 or 0xFF although
/// the session asked for RSSI_REPORTING, or UCI 1.1 range data): its readings get no bias
/// correction, and the contact test loses the evidence that tells a touch from a hand-over
/// (docs/PROXIMITY.md, "Bump without a level": hand-overs 15–25 cm apart bump far more often).
struct LevelWatch: Sendable {
    private(set) var withoutLevel = 0
    private(set) var hasWarned = false
    static let readingsBeforeWarning = 100

    /// Feeds one measured round; true once, when `readingsBeforeWarning` rounds in a row came
    /// without a level.
    mutating func add(hasLevel: Bool) -> Bool {
        guard !hasWarned else { return false }
        withoutLevel = hasLevel ? 0 : withoutLevel + 1
        guard withoutLevel >= Self.readingsBeforeWarning else { return false }
        hasWarned = true
        return true
    }
}
