import Bridge
import Testing
@testable import Proximity

/// Three peers, by id: the tracker orders ties by id.
private let (a, b, c): (UInt64, UInt64, UInt64) = (1, 2, 3)

@Suite struct NearestTests {
    @Test func followsTheClosestPeerWithHysteresis() {
        var nearest = NearestTracker()
        nearest.update(peer: a, distance: 2.0, time: 0)
        #expect(nearest.current == .init(peer: a, distance: 2.0, band: .medium))
        // b is closer, but not by enough to take over.
        nearest.update(peer: b, distance: 1.9, time: 100)
        #expect(nearest.current?.peer == a)
        nearest.update(peer: b, distance: 1.7, time: 200)
        #expect(nearest.current == .init(peer: b, distance: 1.7, band: .medium))
        nearest.update(peer: b, distance: 1.2, time: 300)
        #expect(nearest.current == .init(peer: b, distance: 1.2, band: .medium))
    }

    @Test func bandsChangeOnlyBeyondTheEdgeByTheHysteresis() {
        var nearest = NearestTracker()
        var bands: [DistanceBand?] = []
        for distance in [0.9, 1.05, 1.15, 0.95, 0.25, 0.31, 4] {
            nearest.update(peer: a, distance: distance, time: 0)
            bands.append(nearest.current?.band)
        }
        #expect(bands == [.near, .near, .medium, .medium, .immediate, .immediate, .far])
    }

    @Test func aLostOrSilentPeerHandsOverOrLeavesNoNearest() {
        var nearest = NearestTracker()
        nearest.update(peer: a, distance: 0.5, time: 0)
        nearest.update(peer: b, distance: 2.5, time: 0)
        nearest.remove(peer: a, now: 100)
        #expect(nearest.current?.peer == b)
        nearest.expire(now: 2_000)
        #expect(nearest.current?.peer == b)
        nearest.expire(now: 2_001)
        #expect(nearest.current == nil)
        nearest.update(peer: c, distance: nil, time: 2_100)
        #expect(nearest.current == nil)
    }

    /// The tracker keeps the closest estimate between ranges instead of scanning every peer each
    /// time: on random traffic (ties, silent peers, losses, expiry) it must name the same peer,
    /// distance and band after every call as a plain scan of all current estimates does.
    @Test func keepingTheClosestBetweenRangesChangesNothing() {
        let config = ProximityConfig.default
        for seed in 1...20 {
            var random = SplitMix64(seed: UInt64(seed))
            var tracker = NearestTracker(config: config)
            var reference = ScanningNearest(config: config)
            var time: Int64 = 0
            for _ in 0..<3_000 {
                time += Int64.random(in: 0...60, using: &random)
                let peer = UInt64.random(in: 0..<12, using: &random)
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<3:
                    tracker.remove(peer: peer, now: time)
                    reference.latest[peer] = nil
                case 3..<6:
                    tracker.expire(now: time)
                case 6..<10:
                    tracker.update(peer: peer, distance: nil, time: time)
                    reference.latest[peer] = nil
                default:
                    // Whole centimetres, so equal distances (ties) are common.
                    let distance = Double(Int.random(in: 5...400, using: &random)) / 100
                    tracker.update(peer: peer, distance: distance, time: time)
                    reference.latest[peer] = (distance, time)
                }
                reference.refresh(now: time)
                #expect(tracker.current == reference.nearest.map { .init(peer: $0.peer, distance: $0.distance, band: $0.band) })
            }
        }
    }
}

/// The nearest peer found by a scan of every current estimate on each call, with the same
/// hand-over and band rules: what `NearestTracker` did before it kept the closest estimate.
private struct ScanningNearest {
    let config: ProximityConfig
    var latest: [UInt64: (distance: Double, time: Int64)] = [:]
    var nearest: (peer: UInt64, distance: Double, band: DistanceBand)?

    mutating func refresh(now: Int64) {
        latest = latest.filter { now - $0.value.time <= config.maxGapMilliseconds }
        let closest = latest.min { ($0.value.distance, $0.key) < ($1.value.distance, $1.key) }
        if let current = nearest, let mine = latest[current.peer] {
            if let closest, closest.key != current.peer, closest.value.distance < mine.distance - config.nearestSwitchMetres {
                nearest = (closest.key, closest.value.distance, band(of: closest.value.distance, was: nil))
            } else {
                nearest = (current.peer, mine.distance, band(of: mine.distance, was: current.band))
            }
        } else {
            nearest = closest.map { ($0.key, $0.value.distance, band(of: $0.value.distance, was: nil)) }
        }
    }

    func band(of distance: Double, was previous: DistanceBand?) -> DistanceBand {
        let edges = [config.clearMetres, config.nearMetres, config.mediumMetres]
        let plain = DistanceBand.allCases[edges.firstIndex { distance <= $0 } ?? edges.count]
        guard let previous else { return plain }
        let index = DistanceBand.allCases.firstIndex(of: previous)!
        let lower = index > 0 ? edges[index - 1] * (1 - config.bandHysteresis) : -Double.infinity
        let upper = index < edges.count ? edges[index] * (1 + config.bandHysteresis) : Double.infinity
        return (lower...upper).contains(distance) ? previous : plain
    }
}
