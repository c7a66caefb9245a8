/// What the world's shared UWB air did (`World.sharedAirStatistics`): the figures behind a
/// rig's round success rate and the occupancy it sees.
package struct SharedAirStatistics: Equatable, Sendable {
    /// Rounds run with a partner on the shared air, and those whose measurement it lost.
    package var rounds = 0
    package var lostRounds = 0
    /// Microseconds each channel carried frames of rounds that ran.
    package var busyMicroseconds: [UInt8: Double] = [:]

    package init() {}
}
