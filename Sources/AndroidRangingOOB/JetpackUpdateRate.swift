/// Jetpack's `RangingParameters.updateRateType`, one octet on the wire with Jetpack's own values,
/// and the ranging interval Android runs each at. Verified in two sources:
///
/// - the constants, androidx `core/uwb/uwb/api/current.txt` (and `RangingParameters.kt`'s
///   companion): `RANGING_UPDATE_RATE_AUTOMATIC = 1`, `RANGING_UPDATE_RATE_INFREQUENT = 2`,
///   `RANGING_UPDATE_RATE_FREQUENT = 3` (not in the order their names suggest);
/// - the intervals, AOSP's Jetpack backend (packages/modules/Uwb, read in
///   `GrapheneOS/platform_packages_modules_Uwb` at 040fa855, 2023-12):
///   `UwbClientSessionScopeAospImpl.kt` hands the constant to the backend unchanged, whose
///   `Utils.java` has `NORMAL = 1`, `INFREQUENT = 2`, `FAST = 3` (so since "Fix mismatched update
///   rate", 12f726c7, 2023-06; before it 1 and 2 were swapped) and, for `CONFIG_UNICAST_DS_TWR`,
///   `RangingTimingParams(rangingIntervalNormal 240, rangingIntervalFast 120,
///   rangingIntervalInfrequent 600)`, which `RangingTimingParams.getRangingInterval` picks by that
///   constant and `ConfigurationManager` sends as RANGING_DURATION.
///
/// So automatic is 240 ms, infrequent 600 ms and frequent 120 ms for config type 1: the same three
/// presets `AndroidBoardCapabilities.presetIntervals` holds (fast, normal, infrequent), which is
/// where the interval is looked up, so the two paths cannot drift apart. (Jetpack's "automatic"
/// slows down when the phone's screen is off; the rig, with no screen, keeps the normal interval,
/// which is what the phone starts with.)
package enum JetpackUpdateRate: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    case automatic = 1
    case infrequent = 2
    case frequent = 3

    /// The interval in ms for `configID`, from Android's presets; nil for a config id without
    /// presets.
    package func intervalMilliseconds(configID: UInt8) -> UInt16? {
        guard let presets = AndroidBoardCapabilities.presetIntervals[configID], presets.count == 3 else { return nil }
        switch self {
        case .frequent: return presets[0]
        case .automatic: return presets[1]
        case .infrequent: return presets[2]
        }
    }

    package var description: String {
        switch self {
        case .automatic: "automatic"
        case .infrequent: "infrequent"
        case .frequent: "frequent"
        }
    }
}
