import PeerProtocol

/// Rough proximity from advert RSSI, for peers without a ranging session: a smoothed RSSI and a
/// band with hysteresis, so a fading signal does not flap between bands.
struct RoughProximity: Sendable {
    enum Band: Int, Comparable, Sendable {
        case near = 0, medium, far
        static func < (a: Band, b: Band) -> Bool { a.rawValue < b.rawValue }
    }

    /// Band edges, dBm: about 2 m and 6 m with −59 dBm at 1 m and free-space path loss.
    static let nearRSSI = -65.0
    static let mediumRSSI = -75.0
    static let hysteresis = 3.0

    private(set) var rssi: Double?
    private(set) var band: Band?

    /// Adds one advert's RSSI; returns true when the band changed.
    mutating func add(_ sample: Int) -> Bool {
        let smoothed = rssi.map { $0 + 0.25 * (Double(sample) - $0) } ?? Double(sample)
        rssi = smoothed
        let next = Self.band(of: smoothed, current: band)
        defer { band = next }
        return next != band
    }

    private static func band(of rssi: Double, current: Band?) -> Band {
        // Moving to a closer band needs the edge plus the hysteresis; moving away, the edge minus it.
        func above(_ edge: Double, towards target: Band) -> Bool {
            guard let current else { return rssi >= edge }
            return current <= target ? rssi >= edge - hysteresis : rssi >= edge + hysteresis
        }
        if above(nearRSSI, towards: .near) { return .near }
        if above(mediumRSSI, towards: .medium) { return .medium }
        return .far
    }
}
