
/// Per-peer proximity: a state estimator over the readings, near/far zones with hysteresis and
/// dwell, and bump (contact) detection that fires once per gesture. Pure: no clocks, no I/O.
package struct ProximityTracker: Sendable {
    package let config: ProximityConfig
    private var noise: NoiseEstimator
    private var filter: RangeFilter
    private var zones: ZoneTracker
    private var contact: ContactDetector
    private var level: LevelOffset

    package init(config: ProximityConfig = .default) {
        self.config = config
        noise = NoiseEstimator(config: config)
        filter = RangeFilter(config: config)
        zones = ZoneTracker(config: config)
        contact = ContactDetector(config: config)
        level = LevelOffset(config: config)
    }

    /// Filtered distance in metres (never negative), or nil while there is no estimate.
    package var filtered: Double? { filter.current.map { max(0, $0.distance) } }
    /// Filtered rate of change of the distance, metres per second; negative while approaching.
    package var rate: Double? { filter.current?.rate }
    /// The ranging noise (σ, metres) this peer's readings show, as the filter estimates it; never
    /// below the configured σ.
    package var noiseSigma: Double { noise.sigma }
    package var isNear: Bool { zones.isNear }
    /// False from a contact until the peer has moved away again: one bump per gesture.
    package var contactArmed: Bool { contact.isArmed }

    package mutating func update(_ sample: RangeSample) -> [ProximityChange] {
        if let distance = sample.distance, !sample.nonLineOfSight {
            noise.add(time: sample.time, distance: distance)
        } else {
            noise.skip()
        }
        filter.update(time: sample.time, distance: sample.distance, nonLineOfSight: sample.nonLineOfSight, noiseSigma: noise.sigma)
        if let rssi = sample.rssi, !sample.nonLineOfSight, let estimate = filter.current?.distance {
            level.learn(rssi: rssi, at: estimate)
        }
        let touched = contact.update(
            time: sample.time, distance: sample.distance, nonLineOfSight: sample.nonLineOfSight, sigma: noise.sigma,
            filtered: filter.current?.distance, level: sample.rssi.map(level.normalised),
            saturated: sample.rssi.map(level.saturates) ?? false)
        // A reading always leaves an estimate, and contact only fires on a reading.
        guard let distance = filtered else { return [] }
        var changes: [ProximityChange] = []
        if zones.update(distance: distance, time: sample.time) {
            changes.append(zones.isNear ? .near(distance: distance) : .far(distance: distance))
        }
        if touched { changes.append(.contact(distance: distance)) }
        return changes
    }

    /// Marks the current gesture as used when the peer saw the contact first, so our own
    /// (slightly later) detection of the same gesture does not start a second bump.
    package mutating func consumeContact() {
        contact.consume()
    }
}
