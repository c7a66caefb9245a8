import Testing

@testable import ProximityEvaluation

/// The crowded hall at reduced scale (issue 32; `proximity-eval --hall`): ten rigs at booths of
/// one hall, seed 1. On private air every gesture bumps. On the shared air the fixed scheduling
/// ranges everyone all the time: its rounds meet each other, and bumps are missed (the negative
/// control: a model that lost nothing, or a hall that did not share its air, passes it). The
/// adaptive scheduling sheds far peers while the air is full and bumps every gesture again, on
/// time; nobody bumps a rig they never touched, and every rig finds its booth partner at once.
struct HallTests {
    @Test func tenRigsBumpOnTheSharedAirOnlyWhenTheySpareIt() async throws {
        let report = try await HallReport.run(rigs: [10], minutes: 1, seed: 1)
        let adaptive = try #require(report.rows.first { $0.air == .adaptive }?.figures)
        let fixed = try #require(report.rows.first { $0.air == .fixed }?.figures)
        let ideal = try #require(report.rows.first { $0.air == .ideal }?.figures)
        for figures in [adaptive, fixed, ideal] {
            #expect(figures.gestures >= 15 && figures.gestures == ideal.gestures)
            #expect(figures.falseBumps == 0 && figures.repeated == 0 && figures.oneSided == 0)
            // every side found its booth partner, within the first seconds, adverts colliding or not
            #expect(figures.neverFound == 0 && figures.discoveries.count == 10 && (figures.discoveries.max() ?? 99) < 2)
        }
        #expect(ideal.bothSides == ideal.gestures && ideal.air.rounds == 0)

        #expect(fixed.bothSides < fixed.gestures)
        #expect(Double(fixed.air.lostRounds) > 0.3 * Double(fixed.air.rounds))

        #expect(adaptive.bothSides == adaptive.gestures)
        #expect((adaptive.medianLatency ?? 1) <= 0.2)
        #expect(Double(adaptive.air.lostRounds) < 0.25 * Double(adaptive.air.rounds))
        #expect(adaptive.airLoad < 0.7 * fixed.airLoad)
        #expect(report.markdown.contains("| 10 | shared, adaptive |") && report.markdown.contains("| 10 | private |"))
    }
}
