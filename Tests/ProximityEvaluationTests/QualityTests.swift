import Bridge
import Proximity
import Testing

@testable import ProximityEvaluation

/// The targets at σ = 10 cm on a fixed seed, scaled down from the documented full run
/// (`swift run -c release proximity-eval`) to keep the suite quick. They assert quality, not time.
@Suite struct QualityTargetTests {
    static let scale = QualityEvaluation.Scale(
        bumpGestures: 1_000, handOvers: 100, passBys: 300, tableNeighbours: 90, walkingGroups: 60, boundaryPeers: 12,
        atClearancePeers: 0)

    @Test func bumpAndNearFarMeetTheTargetsAtTenCentimetres() {
        let figures = QualityEvaluation.run(sigma: 0.10, scale: Self.scale, seed: 1)
        print(EvaluationReport(seed: 1, scale: 0, quality: [figures], handshake: [], handshakeSetup: "none").markdown)
        #expect(figures.gestures == 1_000)
        #expect(figures.recall >= 0.99)
        #expect(figures.doubleBumps == 0)
        #expect(figures.clearPeerHours >= 100)
        #expect(figures.falseBumpsPer100PeerHours <= 1)
        #expect((figures.medianLatency ?? .infinity) <= 0.100)
        #expect(figures.boundaryHours >= 12)
        #expect(figures.flapsPerPeerHour <= 1)
    }

    /// The same evaluation with a trigger-happy detector must miss the false-bump target, or the
    /// test above proves nothing.
    @Test func aCarelessDetectorFailsTheFalseBumpTarget() {
        var careless = ProximityConfig()
        careless.evidenceAfterApproach = 3
        careless.evidenceWhileLingering = 3
        let scale = QualityEvaluation.Scale(
            bumpGestures: 1, handOvers: 1, passBys: 1, tableNeighbours: 10, walkingGroups: 1, boundaryPeers: 1, atClearancePeers: 0)
        let figures = QualityEvaluation.run(sigma: 0.10, config: careless, scale: scale, seed: 1)
        #expect(figures.falseBumpsPer100PeerHours > 1)
    }

    @Test func bothSidesAgreeOnEveryGestureWithAThirdOfTheMessagesLost() async throws {
        let figures = try await HandshakeEvaluation.run(pairs: 2, minutes: 5, linkLoss: 0.3, resultLoss: 0.1, sigma: 0.10, seed: 1)
        print("handshake, 30 % of messages lost: \(figures)")
        #expect(figures.gestures >= 20)
        #expect(figures.bothSides + figures.neither == figures.gestures)
        #expect(Double(figures.bothSides) >= 0.9 * Double(figures.gestures))
    }

    /// A controlee that gives up on its own timer, while the controller may still decide, breaks
    /// agreement under loss: the measurement can tell.
    @Test func aControleeThatGivesUpEarlyBreaksAgreement() async throws {
        var hasty = BridgeConfig()
        hasty.exchangeTimeoutMilliseconds = 150
        let figures = try await HandshakeEvaluation.run(
            pairs: 2, minutes: 5, linkLoss: 0.5, resultLoss: 0.1, sigma: 0.10, seed: 1, config: hasty)
        #expect(figures.bothSides + figures.neither < figures.gestures)
    }
}

@Suite struct TraceTests {
    @Test func aBumpGestureKnowsWhenTheDevicesTouch() {
        var generator = TraceGenerator(seed: 3, bumpMetres: 0.08, clearMetres: 0.30, nearMetres: 1, farMetres: 1.5)
        let trace = generator.approachAndBump()
        let contact = trace.contacts[0]
        #expect(trace.distance(at: contact.touch) <= 0.03)
        #expect(abs(trace.distance(at: contact.withinThreshold) - 0.08) < 1e-9)
        #expect(contact.withinThreshold < contact.touch && contact.touch < contact.parted)
        #expect(abs(trace.distance(at: contact.window.lowerBound) - 0.30) < 1e-9)
        #expect(abs(trace.distance(at: contact.window.upperBound) - 0.30) < 1e-9)
    }

    @Test func situationsStayWithinTheirStatedDistances() {
        var generator = TraceGenerator(seed: 4, bumpMetres: 0.08, clearMetres: 0.30, nearMetres: 1, farMetres: 1.5)
        for _ in 0..<50 {
            #expect(generator.make(.tableNeighbour).path.allSatisfy { (0.30...0.65).contains($0.d) })
            #expect(generator.make(.walkingGroup).closest >= 0.30)
            #expect(generator.make(.passBy).closest >= 0.30)
            #expect((0.20...0.40).contains(generator.make(.handOver).closest))
        }
    }

    @Test func percentilesAreNearestRank() {
        #expect(QualityFigures.percentile([3, 1, 2, 4], 0.5) == 2)
        #expect(QualityFigures.percentile([3, 1, 2, 4], 0.95) == 4)
        #expect(QualityFigures.percentile([], 0.5) == nil)
    }
}
