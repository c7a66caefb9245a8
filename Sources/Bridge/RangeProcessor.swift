import Events
import Proximity
import UCI

/// One peer's ranging rounds turned into what the bridge reports: the raw reading read the FiRa
/// way, corrected for the board (received-level bias, calibrated offset), the round's time from
/// the UWBS's counter, the proximity engine's update, and the `range` event (whose `distance`
/// stays the raw reading). Pure (the host time comes in), so the hot path can be measured on its own
/// (Benchmarks/) exactly as `PeerRanging` runs it.
package struct RangeProcessor: Sendable {
    package let peer: String
    private let fallbackIntervalMilliseconds: Int64
    package private(set) var proximity: ProximityTracker
    /// What is subtracted from each reading; the node sets it once the board is known.
    package var correction: RangeCorrection
    /// Round times for proximity, from the UWBS's round counter (see `RoundClock`).
    private var roundClock = RoundClock()

    package init(peer: String, config: BridgeConfig) {
        self.peer = peer
        self.fallbackIntervalMilliseconds = Int64(config.uwb.rangingIntervalMilliseconds)
        self.proximity = ProximityTracker(config: config.proximity)
        self.correction = config.rangeCorrection.correction(forBoard: "")
    }

    /// A reading a board flags OK beyond this is one it cannot have measured (DW3000 boards range
    /// to 100–200 m at best in line of sight), and so is the field's all-ones value 0xFFFF, what
    /// firmwares put where they have no distance. Such a round counts as failed.
    package static let maximumDistanceCentimetres: UInt16 = 30_000

    /// What one measurement gave: the `range` event, and proximity's decisions.
    package struct Outcome: Sendable {
        package var range: Event.Range
        package var changes: [ProximityChange]
        /// The board said OK with a distance it cannot have measured (reported as a failed round).
        package var invalid = false
        /// The reading after correction (nil when the round carried none).
        package var corrected: Double?
        package var azimuth: Double? { range.azimuth }
        /// Whether the round carried a distance (the peer is alive).
        package var measured: Bool { range.distance != nil }
    }

    package mutating func process(_ measurement: TwoWayMeasurement, of data: RangeData, hostTime: Int64) -> Outcome {
        // With OK_NEGATIVE_DISTANCE_REPORT the unsigned distance field is read as the magnitude
        // of a negative reading (unverified on hardware; see firmware-notes/README.md).
        let invalid =
            (measurement.status == .ok || measurement.status == .okNegativeDistanceReport)
            && measurement.distanceCentimetres > Self.maximumDistanceCentimetres
        let distance: Double? =
            switch measurement.status {
            case _ where invalid: nil
            case .ok: Double(measurement.distanceCentimetres) / 100
            case .okNegativeDistanceReport: -Double(measurement.distanceCentimetres) / 100
            default: nil
            }
        let nlos: Bool? =
            switch measurement.lineOfSight {
            case .lineOfSight: false
            case .nonLineOfSight: true
            case .unknown: nil
            }
        let time = roundClock.time(
            ofRound: data.sequenceNumber, reportedInterval: data.rangingIntervalMilliseconds,
            fallbackInterval: fallbackIntervalMilliseconds, hostTime: hostTime)
        let corrected = distance.map { correction.correct($0, rssi: measurement.rssiDBm) }
        let changes = proximity.update(
            RangeSample(time: time, distance: corrected, nonLineOfSight: nlos ?? false, rssi: measurement.rssiDBm))
        let azimuth = Self.angle(measurement.azimuth, within: 180)
        let elevation = Self.angle(measurement.elevation, within: 90)
        let range = Event.Range(
            peer: peer, status: measurement.status.description, distance: distance, filtered: proximity.filtered,
            rate: proximity.rate, nlos: nlos, azimuth: azimuth, elevation: elevation, rssi: measurement.rssiDBm)
        return Outcome(range: range, changes: changes, invalid: invalid, corrected: corrected)
    }

    /// An angle the board measured (figure of merit 1-100, FiRa's percentage) and could have
    /// (azimuth within ±180°, elevation within ±90°); nil otherwise.
    static func angle(_ measurement: AngleMeasurement, within limit: Double) -> Double? {
        guard (1...100).contains(measurement.figureOfMerit), abs(measurement.degrees) <= limit else { return nil }
        return measurement.degrees
    }

    /// See `ProximityTracker.consumeContact`.
    package mutating func consumeContact() {
        proximity.consumeContact()
    }
}
