import Glibc

/// The line-of-sight received level of a board family against distance (free space, path-loss
/// exponent 2): what the contact test weighs a reported level against, and what the simulated
/// radio produces.
package struct LinkBudget: Sendable, Equatable, Codable {
    /// Received level at 1 m, dBm. −63 dBm puts APS011's zero-bias level (−77 dBm) at 5 m, as in
    /// the note's set-up; a board at full transmit power can receive up to 20 dB more (Qorvo forum
    /// reports −58 to −34 dBm at 1 m from a DWM3000 depending on TX power): each peer's own
    /// offset is learnt (`LevelOffset`).
    package var levelAtOneMetreDBm: Double = -63

    package init(levelAtOneMetreDBm: Double = -63) {
        self.levelAtOneMetreDBm = levelAtOneMetreDBm
    }

    /// Level at `metres` (1 cm at least: antennas touching are not at zero distance).
    package func level(atMetres metres: Double) -> Double {
        levelAtOneMetreDBm - 20 * log10(max(metres, 0.01))
    }
}
