import Glibc

/// How much louder or quieter one peer's signal is than the link budget says: boards differ in
/// transmit power and antennas by several dB, and a contact test that compared raw levels with
/// the budget would take a loud peer at 15 cm for a touch.
///
/// Learnt from line-of-sight readings while the peer is 0.3–3 m away (where the filtered
/// distance is good to a few per cent and the receiver is far from saturation), as a slow
/// exponential average: half of it is new after about 35 readings.
struct LevelOffset: Sendable {
    private let budget: LinkBudget
    private let ceiling: Double
    /// The budget's level at a hand-over plus 2σ of level noise: what a hand-over rarely exceeds.
    private let loudHandOverLevel: Double
    private(set) var offset = 0.0
    private static let weight = 0.02
    /// Offsets beyond this are more likely a wrong distance than a board that different.
    private static let limit = 20.0

    init(config: ProximityConfig) {
        budget = LinkBudget(levelAtOneMetreDBm: config.levelAtOneMetreDBm)
        ceiling = config.levelCeilingDBm
        loudHandOverLevel = budget.level(atMetres: config.handOverMetres) + 2 * config.levelSigmaDB
    }

    mutating func learn(rssi: Double, at distance: Double) {
        guard (0.3...3).contains(distance) else { return }
        let sample = rssi - budget.level(atMetres: distance)
        offset = min(max(offset + Self.weight * (sample - offset), -Self.limit), Self.limit)
    }

    /// The level as the budget's board would have received it.
    func normalised(_ rssi: Double) -> Double {
        rssi - offset
    }

    /// Whether `rssi` is the board's saturated reading, and this peer is quiet enough that a
    /// hand-over would rarely saturate it (its level there is 2σ below the ceiling): then a
    /// saturated reading means closer than a hand-over. A peer loud enough to saturate the
    /// receiver at hand-over distance gets no such evidence.
    func saturates(_ rssi: Double) -> Bool {
        rssi >= ceiling - 0.25 && loudHandOverLevel + offset < ceiling
    }
}
