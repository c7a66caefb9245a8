import Bridge
import Testing

@testable import Proximity

@Suite struct ZoneTests {
    @Test func entersNearAfterTheDwellAndLeavesOnlyPastTheFarThreshold() {
        var tracker = ProximityTracker()
        let r1 = tracker.feed(samples([3, 3, 3, 3, 3]))
        #expect(r1.isEmpty)
        // The estimate follows the step down; near needs 300 ms at or below 1 m.
        let near = tracker.feed(samples(Array(repeating: 0.9, count: 20), from: 500))
        #expect(near.count == 1)
        guard case .near(let distance) = near.first else { Issue.record("expected near, got \(near)"); return }
        #expect(distance <= 1.0)
        #expect(tracker.isNear)
        // Between the thresholds: no change.
        let r2 = tracker.feed(samples(Array(repeating: 1.3, count: 50), from: 2_500))
        #expect(r2.isEmpty)
        // Far needs the far condition for 5.5 s (longer than a shadowing episode).
        let far = tracker.feed(samples(Array(repeating: 1.7, count: 80), from: 7_500))
        #expect(far.count == 1)
        if case .far = far.first {} else { Issue.record("expected far, got \(far)") }
    }

    @Test func aBriefExcursionShorterThanTheDwellChangesNothing() {
        var zones = ZoneTracker(config: .default)
        let r3 = zones.update(distance: 0.9, time: 0)
        #expect(r3 == false)
        let r4 = zones.update(distance: 0.9, time: 300)
        #expect(r4 == true)
        let r5 = zones.update(distance: 1.6, time: 400)
        #expect(r5 == false)
        let r6 = zones.update(distance: 1.6, time: 600)
        #expect(r6 == false)
        let r7 = zones.update(distance: 1.2, time: 700)  // back inside: the dwell restarts
        #expect(r7 == false)
        let r8 = zones.update(distance: 1.6, time: 800)
        #expect(r8 == false)
        let r9 = zones.update(distance: 1.6, time: 6_200)
        #expect(r9 == false)
        let r10 = zones.update(distance: 1.6, time: 6_300)  // 5.5 s beyond the far threshold
        #expect(r10 == true)
        #expect(!zones.isNear)
    }

    /// A body stepping between peers standing in the near zone: four seconds of readings 50 cm
    /// long (not flagged NLoS) must not report the peer far.
    @Test func aShadowingEpisodeDoesNotFlipTheZone() {
        var noise = Noise(seed: 9, sigma: 0.05)
        var tracker = ProximityTracker()
        var truth = Array(repeating: 2.0, count: 30) + Array(repeating: 1.1, count: 100)
        let entered = tracker.feed(samples(truth.map { noise.reading($0) }))
        #expect(entered.filter { if case .near = $0 { true } else { false } }.count == 1)
        truth = Array(repeating: 1.6, count: 40) + Array(repeating: 1.1, count: 100)
        let shadowed = tracker.feed(samples(truth.map { noise.reading($0) }, from: 13_000))
        #expect(shadowed.isEmpty)
        #expect(tracker.isNear)
    }

    /// A person standing still right at the near threshold, σ = 10 cm, NLoS long reads, for an hour.
    @Test func standingAtTheNearThresholdForAnHourDoesNotFlap() {
        var noise = Noise(seed: 7, sigma: 0.10)
        var tracker = ProximityTracker()
        var changes: [ProximityChange] = []
        for round in 0..<36_000 {
            let nlos = round % 20 == 7
            let reading = noise.reading(1.0) + (nlos ? 0.4 : 0)
            changes += tracker.update(RangeSample(time: Int64(round) * 100, distance: round % 10 == 3 ? nil : reading, nonLineOfSight: nlos))
        }
        #expect(changes.count <= 1, "\(changes)")
    }
}
