/// What the world's shared UWB air did (`World.sharedAirStatistics`): the figures behind a
/// rig's round success rate and the occupancy it sees.
package struct SharedAirStatistics: Equatable, Sendable {
    /// Rounds run on the shared air (one-to-many: a round with its whole list), and those whose
    /// measurement it lost (for one controlee at least).
    package var rounds = 0
    package var lostRounds = 0
    /// Microseconds each channel carried frames of those rounds (a controller calling a partner
    /// that is not there is on the air too, and not counted).
    package var busyMicroseconds: [UInt8: Double] = [:]

    package init() {}
}
