import Bridge
import Foundation
import Testing
@testable import Proximity

/// Contact at the slow ranging rates phones may ask for (Android's presets: 120, 240 and 600 ms;
/// Jetpack's infrequent rate is 600 ms): evidence gathers per reading, so the approach must still
/// count after as many rounds at 600 ms as at 100 ms. Levels follow the default link budget
/// (−63 dBm at 1 m, 20 dB a decade, σ 3.6 dB), clipped at a −40 dBm ceiling as a saturated
/// receiver reads.
@Suite struct SlowRoundsContactTests {
    /// 1.5 m for 3 s, an approach to 3 cm over 2 s, a 4 s touch, then 1 m apart.
    static func touch(every interval: Int64, seed: UInt64) -> [RangeSample] {
        var noise = Noise(seed: seed, sigma: 0.10)
        return stride(from: Int64(0), to: 10_000, by: Int(interval)).map { t in
            let x: Double = t < 3_000 ? 1.5 : t < 5_000 ? 1.5 - 1.47 * Double(t - 3_000) / 2_000 : t < 9_000 ? 0.03 : 1.0
            let level = min(-40, -63 - 20 * log10(max(x, 0.01)) + 3.6 * noise.random.gaussian())
            return RangeSample(time: t, distance: noise.reading(x), nonLineOfSight: false, rssi: level)
        }
    }

    /// Every rate bumps once on a 4 s touch (at 600 ms it missed before the approach window
    /// spanned six rounds: three contact readings fell inside 2.5 s, and their evidence was short).
    @Test(arguments: [Int64(120), 240, 600])
    func aFourSecondTouchBumpsOnceAtEveryRate(_ interval: Int64) {
        for seed in UInt64(1)...10 {
            var tracker = ProximityTracker()
            let changes = tracker.feed(Self.touch(every: interval, seed: seed))
            #expect(contacts(changes) == 1, "every \(interval) ms, seed \(seed)")
        }
    }

    /// The must-not at the slowest rate: a neighbour at 30 cm for an hour of 600 ms rounds, as
    /// loud as 30 cm is, never bumps, and neither does one that comes from 1.5 m to 30 cm and stays.
    @Test func aNeighbourAtThirtyCentimetresDoesNotBumpAt600Milliseconds() {
        var noise = Noise(seed: 33, sigma: 0.10)
        var lingering = ProximityTracker()
        let hour = (0..<6_000).map { index in
            RangeSample(
                time: Int64(index) * 600, distance: noise.reading(0.30), nonLineOfSight: false,
                rssi: -63 - 20 * log10(0.30) + 3.6 * noise.random.gaussian())
        }
        #expect(contacts(lingering.feed(hour)) == 0)

        var arriving = ProximityTracker()
        let approach = (0..<600).map { index in
            let x = max(0.30, 1.5 - 0.3 * Double(index))
            return RangeSample(
                time: Int64(index) * 600, distance: noise.reading(x), nonLineOfSight: false,
                rssi: -63 - 20 * log10(x) + 3.6 * noise.random.gaussian())
        }
        #expect(contacts(arriving.feed(approach)) == 0)
    }
}
