import UCI

/// One peer's measurement from one round, with the round it came in (its sequence number and
/// interval time the reading).
struct RangeReading: Sendable {
    var round: RangeData
    var measurement: TwoWayMeasurement
}
