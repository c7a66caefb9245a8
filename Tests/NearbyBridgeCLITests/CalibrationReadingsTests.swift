import Events
import Testing

@testable import NearbyBridgeCLI

/// A calibration step ends when its readings are in (woken by the event that completes them,
/// issue 30), or at its time limit without them.
@Suite struct CalibrationReadingsTests {
    static func range(_ metres: Double, nlos: Bool = false) -> Event {
        Event(
            node: "rig",
            body: .range(.init(peer: "ref", status: "OK", distance: metres, filtered: metres, rate: 0, nlos: nlos, azimuth: nil, elevation: nil)))
    }

    @Test(.timeLimit(.minutes(1))) func aStepEndsWithTheReadingThatCompletesIt() async {
        let readings = CalibrationReadings()
        readings.start(lineOfSight: 2)
        readings.receive([Self.range(0.10), Self.range(0.30, nlos: true)], timestampMilliseconds: 0)
        let step = Task { await readings.waitForStep(within: .seconds(3600)) }
        readings.receive([Self.range(0.12)], timestampMilliseconds: 1)
        await step.value
        #expect(readings.stop().map(\.metres) == [0.10, 0.30, 0.12])
    }

    @Test(.timeLimit(.minutes(1))) func aStepWithoutItsReadingsEndsAtItsTimeLimit() async {
        let readings = CalibrationReadings()
        readings.start(lineOfSight: 5)
        readings.receive([Self.range(0.10)], timestampMilliseconds: 0)
        await readings.waitForStep(within: .milliseconds(1))
        #expect(readings.stop().count == 1)
    }

    @Test func readingsOutsideAStepAreNotKept() {
        let readings = CalibrationReadings()
        readings.receive([Self.range(0.10)], timestampMilliseconds: 0)
        #expect(readings.stop().isEmpty)
    }
}
