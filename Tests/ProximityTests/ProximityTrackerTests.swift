import Testing

@testable import Proximity

@Suite struct ProximityTrackerTests {
    func feed(_ tracker: inout ProximityTracker, _ distances: [Double?]) -> [ProximityChange] {
        distances.flatMap { tracker.update(RangeSample(distance: $0)) }
    }

    @Test func entersNearAtThresholdAndLeavesOnlyPastTheFarThreshold() {
        var tracker = ProximityTracker()
        #expect(feed(&tracker, [3, 2.5, 2]).isEmpty)
        #expect(feed(&tracker, [0.9, 0.9, 0.9]) == [.near(distance: 0.9)])
        // Between the thresholds: no change either way.
        #expect(feed(&tracker, [1.3, 1.3, 1.3, 1.3, 1.3]).isEmpty)
        #expect(feed(&tracker, [1.6, 1.6, 1.6]) == [.far(distance: 1.6)])
    }

    @Test func standingAtTheBoundaryDoesNotFlap() {
        var tracker = ProximityTracker()
        var changes: [ProximityChange] = []
        for i in 0..<1000 { changes += tracker.update(RangeSample(distance: i.isMultiple(of: 2) ? 0.95 : 1.45)) }
        #expect(changes == [.near(distance: 0.95)])
    }

    @Test func medianRejectsASingleOutlier() {
        var tracker = ProximityTracker()
        _ = feed(&tracker, [0.5, 0.5, 0.5, 0.5, 0.5])
        #expect(feed(&tracker, [4.0]).isEmpty)
        #expect(tracker.filtered == 0.5)
    }

    @Test func oneContactPerApproachAndRearmAfterSeparation() {
        var tracker = ProximityTracker()
        var changes = feed(&tracker, [0.5, 0.3, 0.05, 0.02, -0.03, 0.01, 0.0, 0.02, 0.01, 0.0])
        #expect(changes.filter { if case .contact = $0 { true } else { false } }.count == 1)
        changes = feed(&tracker, [0.1, 0.2, 0.25, 0.2])  // not far enough to re-arm
        changes += feed(&tracker, [0.02, 0.02, 0.02, 0.02, 0.02])
        #expect(!changes.contains { if case .contact = $0 { true } else { false } })
        changes = feed(&tracker, [0.4, 0.4, 0.4, 0.02, 0.02, 0.02, 0.02, 0.02])
        #expect(changes.filter { if case .contact = $0 { true } else { false } }.count == 1)
    }

    @Test func aSingleLuckyReadingIsNotAContact() {
        var tracker = ProximityTracker()
        let changes = feed(&tracker, [0.3, 0.3, 0.01, 0.3, 0.3, 0.01, 0.3])
        #expect(!changes.contains { if case .contact = $0 { true } else { false } })
    }

    @Test func failedRoundsAreIgnoredAndConsumedContactStaysConsumed() {
        var tracker = ProximityTracker()
        #expect(feed(&tracker, [nil, nil]).isEmpty)
        #expect(tracker.filtered == nil)
        tracker.consumeContact()
        #expect(!feed(&tracker, [0.02, 0.02, 0.02, 0.02, 0.02]).contains { if case .contact = $0 { true } else { false } })
    }
}
