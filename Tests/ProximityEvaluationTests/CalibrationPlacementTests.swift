import Bridge
import Proximity
import Simulation
import Testing

/// Placements: steps at one distance are averaged before the distances are compared, so one
/// spot's multipath does not refuse a calibration that the other spot balances.
@Suite struct CalibrationPlacementTests {
    static func step(_ distance: Double, readsLongBy offset: Double) -> Calibration.Step {
        Calibration.Step(
            trueMetres: distance,
            readings: (0..<60).map { i in .init(metres: distance + offset + (i % 2 == 0 ? 0.01 : -0.01), rssi: nil, nonLineOfSight: false) })
    }

    @Test func twoSpotsAtOneDistanceAreAveragedBeforeTheDistancesAreCompared() throws {
        let steps = [
            Self.step(0.50, readsLongBy: 0.16), Self.step(0.50, readsLongBy: 0.04),
            Self.step(1.00, readsLongBy: 0.09), Self.step(1.00, readsLongBy: 0.11),
        ]
        let result = try Calibration.solve(steps, correction: .none)
        #expect(abs(result.offset - 0.10) < 0.001)
        #expect(result.steps.count == 4)
        // The same spots as distances of their own disagree by 12 cm: refused.
        #expect(throws: Calibration.Refusal.self) {
            try Calibration.solve([Self.step(0.50, readsLongBy: 0.16), Self.step(1.00, readsLongBy: 0.04)], correction: .none)
        }
    }
}
