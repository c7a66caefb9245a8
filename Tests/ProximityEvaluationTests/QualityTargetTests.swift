import Bridge
import Proximity
import Testing

@testable import ProximityEvaluation

/// The issues' targets on the realistic radio (bias corrected from RSSI, calibrated boards) on a
/// fixed seed, scaled down from the documented full run (`swift run -c release proximity-eval`) to
/// keep the suite quick, with negative controls that must miss them. They assert quality, not time.
/// One at a time, each on a thread of its own (`onItsOwnThread`): the other suites keep their turns.
@Suite(.serialized) struct QualityTargetTests {
    static let scale = QualityEvaluation.Scale(
        bumpGestures: 1_000, handOvers: 600, passBys: 200, tableNeighbours: 40, walkingGroups: 60, boundaryPeers: 6,
        atClearancePeers: 6, standingClosePeers: 30, nearZonePeers: 6)
    /// Hand-overs and standing at a threshold only: what the negative controls must fail.
    static let handOversAndThresholds = QualityEvaluation.Scale(
        bumpGestures: 1, handOvers: 600, passBys: 1, tableNeighbours: 1, walkingGroups: 1, boundaryPeers: 6,
        atClearancePeers: 1, standingClosePeers: 1, nearZonePeers: 6)

    @Test func theRealisticRadioMeetsTheTargets() async {
        let figures = await onItsOwnThread { QualityEvaluation.run(setup: .realistic, scale: Self.scale, seed: 1) }
        print(EvaluationReport(seed: 1, scale: 0, quality: [figures], handshake: [], handshakeSetup: "none").markdown)
        #expect(figures.gestures == 1_000)
        #expect(figures.recall >= 0.99)
        #expect(figures.doubleBumps == 0)
        #expect((figures.medianLatency ?? .infinity) <= 0.060)
        #expect((figures.p95Latency ?? .infinity) <= 0.300)
        #expect(figures.farContacts == 0)
        #expect(figures.earlyShare <= 0.005)
        #expect(figures.handOverBumpShare(20..<100).count >= 300)
        #expect(figures.handOverBumpShare(20..<100).share <= 0.01)
        #expect(figures.handOverBumpShare(15..<20).count >= 60)
        #expect(figures.handOverBumpShare(15..<20).share <= 0.05)
        #expect(figures.clearPeerHours >= 80)
        #expect(figures.falseBumpsPer100PeerHours <= 1)
        #expect(figures.atClearanceFalseBumps == 0)
        #expect(figures.boundaryHours + figures.nearZoneHours >= 12)
        #expect(figures.flapsPerPeerHour <= 1)
    }

    /// A board whose RSSI reads a constant 6 dB high or low: the engine learns the peer's level
    /// from 0.3–3 m and judges saturation on it, so what the docs record as met holds (a board
    /// 6 dB high lets hand-overs at 15–20 cm bump more than 5 %, docs/PROXIMITY.md).
    @Test(arguments: [RadioSetup.rssiTooHigh, .rssiTooLow])
    func aBoardWhoseRSSIIsOffBySixDecibels(setup: RadioSetup) async {
        let figures = await onItsOwnThread { QualityEvaluation.run(setup: setup, scale: Self.scale, seed: 1) }
        #expect(figures.recall >= 0.99)
        #expect(figures.doubleBumps == 0)
        #expect(figures.farContacts == 0)
        #expect(figures.earlyShare <= 0.005)
        #expect(figures.handOverBumpShare(20..<100).share <= 0.01)
        #expect(figures.falseBumpsPer100PeerHours <= 1)
        #expect(figures.flapsPerPeerHour <= 1)
    }

    /// Issue 29: a board that reports no RSSI still bumps (calibrated, or with firmware that
    /// corrects its own bias and no calibration at all), once per gesture.
    @Test(arguments: [RadioSetup.withoutRSSI, .withoutRSSISelfCorrecting])
    func aBoardWithoutRSSIStillBumps(setup: RadioSetup) async {
        let figures = await onItsOwnThread { QualityEvaluation.run(setup: setup, scale: Self.scale, seed: 1) }
        #expect(figures.gestures == 1_000)
        #expect(figures.recall >= 0.98)
        #expect(figures.doubleBumps == 0)
        #expect((figures.p95Latency ?? .infinity) <= 0.400)
        #expect(figures.flapsPerPeerHour <= 1)
    }

    /// The negative control of issue 29: the same self-correcting board under the correction of
    /// 2026-11-25 (the bias looked up at a level guessed from the distance), which reads a touch
    /// 11 cm long: it must miss the recall the test above asserts.
    @Test func aBiasGuessedFromTheDistanceCostsABoardWithoutRSSIItsBumps() async {
        let scale = QualityEvaluation.Scale(
            bumpGestures: 1_000, handOvers: 1, passBys: 1, tableNeighbours: 1, walkingGroups: 1, boundaryPeers: 1, atClearancePeers: 1)
        let figures = await onItsOwnThread { QualityEvaluation.run(setup: .withoutRSSILevelFromDistance, scale: scale, seed: 1) }
        #expect(figures.recall < 0.90)
    }

    /// Without the bias correction the radio reads ~10 cm short up close: hand-overs bump.
    @Test func withoutBiasCorrectionHandOversBump() async {
        let figures = await onItsOwnThread { QualityEvaluation.run(setup: .uncorrected, scale: Self.handOversAndThresholds, seed: 1) }
        #expect(figures.handOverBumpShare(15..<20).share > 0.05 || figures.handOverBumpShare(20..<100).share > 0.01)
    }

    /// The engine as it was before the hand-over hypothesis, the received level and the long far
    /// dwell, on the same radio: it must miss the hand-over and flap targets, or the test above
    /// proves nothing.
    @Test func theEarlierEngineFailsOnTheRealisticRadio() async {
        var earlier = ProximityConfig()
        earlier.handOverMarginMetres = earlier.clearMetres - earlier.bumpMetres
        earlier.levelEvidenceCap = 0
        earlier.evidenceAfterApproach = 9
        earlier.farDwellMilliseconds = earlier.zoneDwellMilliseconds
        let config = earlier
        let figures = await onItsOwnThread { QualityEvaluation.run(setup: .realistic, config: config, scale: Self.handOversAndThresholds, seed: 1) }
        #expect(figures.handOverBumpShare(15..<20).share > 0.05)
        #expect(figures.handOverBumpShare(20..<100).share > 0.01)
        #expect(figures.flapsPerPeerHour > 1)
    }

    /// A trigger-happy detector (little evidence, weighed against the clearance, deaf to the level)
    /// must miss the false-bump target on neighbours at a table.
    @Test func aCarelessDetectorFailsTheFalseBumpTarget() async {
        var careless = ProximityConfig()
        careless.evidenceWhileLingering = careless.evidenceAfterApproach
        careless.handOverMarginMetres = careless.clearMetres - careless.bumpMetres
        careless.levelEvidenceCap = 0
        let scale = QualityEvaluation.Scale(
            bumpGestures: 1, handOvers: 1, passBys: 1, tableNeighbours: 10, walkingGroups: 1, boundaryPeers: 1, atClearancePeers: 0)
        let config = careless
        let figures = await onItsOwnThread { QualityEvaluation.run(setup: .realistic, config: config, scale: scale, seed: 1) }
        #expect(figures.falseBumpsPer100PeerHours > 1)
    }

    @Test func bothSidesAgreeOnEveryGestureWithAThirdOfTheMessagesLost() async throws {
        let figures = try await HandshakeEvaluation.run(pairs: 2, minutes: 5, linkLoss: 0.3, resultLoss: 0.1, seed: 1)
        print("handshake, 30 % of messages lost: \(figures)")
        #expect(figures.gestures >= 20)
        #expect(figures.bothSides + figures.neither == figures.gestures)
        #expect(Double(figures.bothSides) >= 0.9 * Double(figures.gestures))
    }

    /// A controller whose deadline is shorter than a few repeats under loss declines most
    /// touches: the figure the test above asserts can fail.
    @Test func aControllerThatGivesUpEarlyLosesTheBumps() async throws {
        var hasty = BridgeConfig()
        hasty.exchangeTimeoutMilliseconds = 150
        let figures = try await HandshakeEvaluation.run(
            pairs: 2, minutes: 5, linkLoss: 0.5, resultLoss: 0.1, seed: 1, config: hasty)
        #expect(figures.gestures >= 20)
        #expect(Double(figures.bothSides) < 0.9 * Double(figures.gestures))
    }
}
