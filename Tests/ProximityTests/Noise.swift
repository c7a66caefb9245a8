import Bridge
import Testing
@testable import Proximity

/// Readings every 100 ms from `start`, one per entry (nil: a failed round).
func samples(_ distances: [Double?], from start: Int64 = 0, nlos: Set<Int> = [], rssi: Double? = nil) -> [RangeSample] {
    distances.enumerated().map {
        RangeSample(time: start + Int64($0.offset) * 100, distance: $0.element, nonLineOfSight: nlos.contains($0.offset), rssi: rssi)
    }
}

/// Gaussian noise with a fixed seed, rounded to whole centimetres like a board reports.
struct Noise {
    var random: SplitMix64
    let sigma: Double
    init(seed: UInt64, sigma: Double) {
        random = SplitMix64(seed: seed)
        self.sigma = sigma
    }
    mutating func reading(_ truth: Double) -> Double { ((truth + sigma * random.gaussian()) * 100).rounded() / 100 }
}

extension ProximityTracker {
    mutating func feed(_ samples: [RangeSample]) -> [ProximityChange] { samples.flatMap { update($0) } }
}

extension ProximityChange {
    var isContact: Bool { if case .contact = self { true } else { false } }
}

func contacts(_ changes: [ProximityChange]) -> Int {
    changes.filter(\.isContact).count
}
