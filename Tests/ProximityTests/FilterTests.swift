import Bridge
import Testing
@testable import Proximity

@Suite struct FilterTests {
    @Test func followsAnApproachWithoutTheLagOfAWindow() {
        var tracker = ProximityTracker()
        var noise = Noise(seed: 3, sigma: 0.10)
        // 2 s still at 2 m, then approaching at 0.5 m/s.
        let truth = (0..<50).map { $0 < 20 ? 2.0 : 2.0 - 0.05 * Double($0 - 19) }
        _ = tracker.feed(samples(truth.map { noise.reading($0) }))
        #expect(abs(tracker.filtered! - truth.last!) < 0.12)
        #expect(abs(tracker.rate! + 0.5) < 0.25)
    }

    @Test func oneLongReadingDoesNotMoveTheEstimate() {
        var tracker = ProximityTracker()
        _ = tracker.feed(samples(Array(repeating: 0.5, count: 20)))
        _ = tracker.feed(samples([2.5], from: 2_000))
        #expect(abs(tracker.filtered! - 0.5) < 0.01)
        // NLoS-flagged readings count, but weakly.
        _ = tracker.feed(samples([0.9], from: 2_100, nlos: [0]))
        #expect(abs(tracker.filtered! - 0.5) < 0.08)
    }

    @Test func followsAPeerThatReallyMovedDuringADropout() {
        var tracker = ProximityTracker()
        _ = tracker.feed(samples(Array(repeating: 0.5, count: 20)))
        _ = tracker.feed(samples([nil, nil, nil, nil, nil, nil, nil, nil, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0], from: 2_000))
        #expect(abs(tracker.filtered! - 3.0) < 0.05)
    }

    @Test func dropsTheEstimateAfterALongSilenceAndNeverReportsANegativeDistance() {
        var tracker = ProximityTracker()
        _ = tracker.feed(samples([-0.04, -0.02, -0.05, -0.03]))
        #expect(tracker.filtered == 0)
        _ = tracker.feed(samples(Array(repeating: nil, count: 25), from: 400))
        #expect(tracker.filtered == nil)
        _ = tracker.feed(samples([1.2], from: 3_000))
        #expect(tracker.filtered == 1.2)
    }

    @Test func learnsANoisierRadioButNeverTrustsOneBeyondTheConfiguredSigma() {
        var noisy = ProximityTracker()
        var noise = Noise(seed: 11, sigma: 0.20)
        // Walking away at 1 m/s: motion must not pass for noise.
        _ = noisy.feed(samples((0..<600).map { noise.reading(1 + 0.1 * Double($0) / 10) }))
        #expect(abs(noisy.noiseSigma - 0.20) < 0.03)

        var quiet = ProximityTracker()
        var little = Noise(seed: 12, sigma: 0.02)
        _ = quiet.feed(samples((0..<600).map { _ in little.reading(1) }))
        #expect(quiet.noiseSigma == ProximityConfig.default.rangingSigmaMetres)
    }
}
