/// Thresholds for the near zone and for bumps, in metres.
public struct ProximityConfig: Sendable, Equatable {
    /// Enter the near zone at or below this filtered distance.
    public var nearMetres: Double
    /// Leave it (a `far` event) at or above this one; the gap is the hysteresis.
    public var farMetres: Double
    /// Contact: a bump fires when the filtered distance is at or below this.
    public var bumpMetres: Double
    /// A new bump is possible only after the peer moved at least this far away again.
    public var rearmMetres: Double
    /// Number of recent valid readings the median filter looks at.
    public var window: Int

    public init(
        nearMetres: Double = 1.0, farMetres: Double = 1.5, bumpMetres: Double = 0.08,
        rearmMetres: Double = 0.30, window: Int = 5
    ) {
        self.nearMetres = nearMetres
        self.farMetres = farMetres
        self.bumpMetres = bumpMetres
        self.rearmMetres = rearmMetres
        self.window = window
    }

    public static let `default` = ProximityConfig()
}

/// One ranging round as proximity sees it.
public struct RangeSample: Sendable, Equatable {
    /// Metres, may be slightly negative at contact; nil when the round failed.
    public var distance: Double?
    public var nonLineOfSight: Bool

    public init(distance: Double?, nonLineOfSight: Bool = false) {
        self.distance = distance
        self.nonLineOfSight = nonLineOfSight
    }
}

public enum ProximityChange: Sendable, Equatable {
    case near(distance: Double)
    case far(distance: Double)
    /// Contact detected; the bridge starts the profile drop.
    case contact(distance: Double)
}

/// Per-peer proximity: a median filter over recent readings, a near/far zone with hysteresis,
/// and contact detection that fires once per approach.
///
/// Deliberately simple (the walking skeleton); the median of several readings rejects a single
/// NLoS outlier or a noisy sample, which is enough for the demo's noise model.
public struct ProximityTracker: Sendable {
    public let config: ProximityConfig
    private var recent: [Double] = []
    public private(set) var isNear = false
    /// False from a contact until the peer has moved away again: one bump per approach.
    public private(set) var contactArmed = true
    public private(set) var filtered: Double?

    public init(config: ProximityConfig = .default) {
        self.config = config
    }

    public mutating func update(_ sample: RangeSample) -> [ProximityChange] {
        guard let distance = sample.distance else { return [] }
        recent.append(distance)
        if recent.count > config.window { recent.removeFirst(recent.count - config.window) }
        let median = recent.sorted()[recent.count / 2]
        filtered = median

        var changes: [ProximityChange] = []
        if !isNear, median <= config.nearMetres {
            isNear = true
            changes.append(.near(distance: median))
        } else if isNear, median >= config.farMetres {
            isNear = false
            changes.append(.far(distance: median))
        }
        // Contact needs a full window so one lucky reading cannot fire it.
        if contactArmed, recent.count == config.window, median <= config.bumpMetres {
            contactArmed = false
            changes.append(.contact(distance: median))
        } else if !contactArmed, median >= config.rearmMetres {
            contactArmed = true
        }
        return changes
    }

    /// Marks the current approach as used when the peer saw the contact first, so our own
    /// (slightly later) detection of the same gesture does not start a second bump.
    public mutating func consumeContact() {
        contactArmed = false
    }
}
