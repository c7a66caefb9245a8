import Testing

@testable import ProximityEvaluation

/// The crowded hall at reduced scale (issue 32; `proximity-eval --hall`): ten rigs at booths of
/// one hall. On private air today's scheduling bumps every gesture; on the shared air its rounds
/// meet each other, and the figures must say so — the baseline the rig's own sharing of the air
/// is to improve on. A model that lost nothing, or a scoring that saw bumps between rigs that
/// never touch, fails here.
struct HallTests {
    @Test func tenRigsLoseRoundsToTheSharedAirButNoBumpIsFalse() async throws {
        let report = try await HallReport.run(rigs: [10], minutes: 1, seed: 1)
        let shared = try #require(report.rows.first { $0.sharedAir }?.figures)
        let ideal = try #require(report.rows.first { !$0.sharedAir }?.figures)
        #expect(ideal.gestures >= 15 && ideal.bothSides == ideal.gestures)
        #expect(ideal.oneSided == 0 && ideal.repeated == 0 && ideal.falseBumps == 0)
        #expect(ideal.air.rounds == 0)
        #expect(shared.gestures == ideal.gestures)
        #expect(shared.air.rounds > 10_000)
        #expect(Double(shared.air.lostRounds) > 0.2 * Double(shared.air.rounds))
        #expect((shared.air.busyMicroseconds[9] ?? 0) / 1e6 / shared.seconds > 0.1)
        #expect(shared.falseBumps == 0 && shared.repeated == 0)
        #expect(report.markdown.contains("| 10 | shared |") && report.markdown.contains("| 10 | private |"))
    }
}
