import Proximity
import Synchronization
import UCI

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
