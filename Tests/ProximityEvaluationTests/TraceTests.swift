import Bridge
import Proximity
import Testing
@testable import ProximityEvaluation

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
            #expect((0.10...0.40).contains(generator.make(.handOver).closest))
        }
    }

    @Test func percentilesAreNearestRank() {
        #expect(QualityFigures.percentile([3, 1, 2, 4], 0.5) == 2)
        #expect(QualityFigures.percentile([3, 1, 2, 4], 0.95) == 4)
        #expect(QualityFigures.percentile([], 0.5) == nil)
    }
}
