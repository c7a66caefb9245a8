/// Near/far with hysteresis and dwell.
///
/// Hysteresis (enter at `near`, leave at `far`) absorbs the filter's noise; dwell (the condition
/// must hold for `zoneDwell`) absorbs the rarer excursions across a whole gap, such as a filter
/// restarting after a dropout. Together they keep a person standing at a threshold from flapping.
///
/// Leaving the near zone takes longer (`farDwellMilliseconds`): body shadowing (someone stepping
/// between the devices) reads 15–60 cm long for 1–5 s, often unflagged and often rising no faster
/// than a walk, so only a longer hold tells it from a peer that left.
struct ZoneTracker: Sendable {
    private let config: ProximityConfig
    private(set) var isNear = false
    /// Since when the condition for leaving the current zone has held continuously.
    private var pendingSince: Int64?

    init(config: ProximityConfig) {
        self.config = config
    }

    /// Returns true when the zone changed with this estimate.
    mutating func update(distance: Double, time: Int64) -> Bool {
        let leaving = isNear ? distance >= config.farMetres : distance <= config.nearMetres
        guard leaving else {
            pendingSince = nil
            return false
        }
        let since = pendingSince ?? time
        pendingSince = since
        guard time - since >= (isNear ? config.farDwellMilliseconds : config.zoneDwellMilliseconds) else { return false }
        isNear.toggle()
        pendingSince = nil
        return true
    }
}
