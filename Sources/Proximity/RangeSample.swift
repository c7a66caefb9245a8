/// One ranging round as proximity sees it.
package struct RangeSample: Sendable, Equatable {
    /// When the round happened, in milliseconds on any steady timeline (see `RoundClock`). The
    /// engine reads no clock: times come with the samples, so replays and tests are exact.
    package var time: Int64
    /// Metres, may be negative at contact; nil when the round failed.
    package var distance: Double?
    package var nonLineOfSight: Bool
    /// The received level the board reported, dBm; nil when it reports none.
    package var rssi: Double?

    package init(time: Int64, distance: Double?, nonLineOfSight: Bool = false, rssi: Double? = nil) {
        self.time = time
        self.distance = distance
        self.nonLineOfSight = nonLineOfSight
        self.rssi = rssi
    }
}
