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

@Suite struct ContactTests {
    /// 1.2 m, then an approach at 0.5 m/s to touch, half a second of contact, and apart again.
    func gesture(_ noise: inout Noise, from start: Int64 = 0) -> [RangeSample] {
        var truth = Array(repeating: 1.2, count: 30)
        truth += (1...24).map { 1.2 - 0.05 * Double($0) }
        truth += Array(repeating: 0.01, count: 5)
        truth += (1...24).map { 0.01 + 0.05 * Double($0) }
        truth += Array(repeating: 1.2, count: 30)
        return samples(truth.map { noise.reading($0) - ($0 < 0.15 ? 0.03 : 0) }, from: start)
    }

    @Test func aGestureBumpsOnceAndTheDetectorReArmsAfterSeparation() {
        var tracker = ProximityTracker()
        var noise = Noise(seed: 5, sigma: 0.10)
        let r10 = tracker.feed(gesture(&noise))
        #expect(contacts(r10) == 1)
        #expect(tracker.contactArmed)
        let r11 = tracker.feed(gesture(&noise, from: 20_000))
        #expect(contacts(r11) == 1)
    }

    /// Readings at contact with a loud received level: after an approach the second fires; a
    /// peer that has lingered close must show more of them.
    @Test func anApproachLowersTheEvidenceContactNeeds() {
        let atContact: [Double?] = Array(repeating: 0.02, count: 12)
        var approached = ProximityTracker()
        _ = approached.feed(samples([1.2, 1.2, 1.2, 1.2, 1.2, 1.0, 0.8, 0.6, 0.4, 0.25]))
        let afterApproach = samples(atContact, from: 1_000, rssi: -36).map { approached.update($0).contains(where: \.isContact) }
        #expect(afterApproach.firstIndex(of: true) == 1)
        #expect(afterApproach.filter { $0 }.count == 1)

        var lingered = ProximityTracker()
        _ = lingered.feed(samples(Array(repeating: 0.35, count: 50), rssi: -52))
        let afterLingering = samples(atContact, from: 5_000, rssi: -36).map { lingered.update($0).contains(where: \.isContact) }
        #expect((afterLingering.firstIndex(of: true) ?? 99) > 2)
        #expect(afterLingering.filter { $0 }.count == 1)
    }

    /// Readings that say contact while the received level says 30 cm (correlated multipath
    /// reading short during a hand-over): the level vetoes.
    @Test func aQuietLevelVetoesReadingsThatLookLikeContact() {
        var tracker = ProximityTracker()
        _ = tracker.feed(samples([1.2, 1.2, 1.2, 1.2, 1.2, 1.0, 0.8, 0.6, 0.4, 0.25]))
        let held = tracker.feed(samples(Array(repeating: 0.04, count: 20), from: 1_000, rssi: -52))
        #expect(contacts(held) == 0)
    }

    @Test func devicesLeftTogetherForMinutesBumpOnce() {
        var tracker = ProximityTracker()
        var noise = Noise(seed: 9, sigma: 0.10)
        var changes = tracker.feed(samples([1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]))
        // Five minutes in contact, with a multipath outlier now and then.
        changes += tracker.feed(samples((0..<3_000).map { $0 % 97 == 0 ? 2.0 : noise.reading(0.0) - 0.03 }, from: 900))
        #expect(contacts(changes) == 1)
    }

    @Test func oneLuckyReadingIsNotAContact() {
        var tracker = ProximityTracker()
        let r15 = tracker.feed(samples([0.3, 0.3, 0.01, 0.3, 0.3, 0.01, 0.3, -0.02, 0.3]))
        #expect(contacts(r15) == 0)
    }

    /// A neighbour lingering at the clearance with σ = 10 cm for two hours.
    @Test func aNeighbourAtThirtyCentimetresDoesNotBump() {
        var tracker = ProximityTracker()
        var noise = Noise(seed: 21, sigma: 0.10)
        let r16 = tracker.feed(samples((0..<72_000).map { _ in noise.reading(0.30) }))
        #expect(contacts(r16) == 0)
    }

    @Test func nlosReadingsAndFailedRoundsAreNoContactAndAConsumedGestureStaysConsumed() {
        var tracker = ProximityTracker()
        let r17 = tracker.feed(samples([nil, nil]))
        #expect(r17.isEmpty)
        #expect(tracker.filtered == nil)
        let r18 = tracker.feed(samples([1, 0.5, 0.0, 0.0, 0.0, 0.0], from: 200, nlos: [2, 3, 4, 5]))
        #expect(contacts(r18) == 0)
        tracker.consumeContact()
        let r19 = tracker.feed(samples([0.02, 0.0, -0.02, 0.01, 0.0, 0.02], from: 800))
        #expect(contacts(r19) == 0)
    }

    @Test func aTighterBumpThresholdNeedsCloserReadings() {
        var loose = ProximityTracker(config: ProximityConfig(bumpMetres: 0.15))
        var tight = ProximityTracker(config: ProximityConfig(bumpMetres: 0.03))
        // Held at 10 cm, as loud as 10 cm is: contact for a 15 cm threshold, not for a 3 cm one.
        let readings = samples([1.2, 1.2, 1.2, 1.2, 1.0, 0.6, 0.3]) + samples(Array(repeating: 0.10, count: 8), from: 700, rssi: -43)
        let r20 = loose.feed(readings)
        #expect(contacts(r20) == 1)
        let r21 = tight.feed(readings)
        #expect(contacts(r21) == 0)
    }
}

@Suite struct ConfigTests {
    @Test func thresholdsThatMakeNoSenseAreExplained() {
        #expect(ProximityConfig.default.problems.isEmpty)
        #expect(ProximityConfig(nearMetres: 2, farMetres: 1).problems == ["the far threshold must be larger than the near threshold (e.g. near 1.0, far 1.5)"])
        #expect(ProximityConfig(bumpMetres: 0.25).problems == ["the bump threshold must be between 0 and 0.2 m (e.g. 0.08)"])
        #expect(ProximityConfig(nearMetres: 0).problems.count == 1)
    }
}

@Suite struct RoundClockTests {
    @Test func roundsAreSpacedByTheRadiosIntervalWhateverTheHostSaw() {
        var clock = RoundClock()
        let r22 = clock.time(ofRound: 10, reportedInterval: 100, fallbackInterval: 200, hostTime: 5_000)
        #expect(r22 == 5_000)
        // Two notifications read in one burst, late: still 100 ms apart.
        let r23 = clock.time(ofRound: 11, reportedInterval: 100, fallbackInterval: 200, hostTime: 5_180)
        #expect(r23 == 5_100)
        let r24 = clock.time(ofRound: 12, reportedInterval: 100, fallbackInterval: 200, hostTime: 5_181)
        #expect(r24 == 5_200)
        // A missing round shows as a 200 ms step.
        let r25 = clock.time(ofRound: 14, reportedInterval: 100, fallbackInterval: 200, hostTime: 5_405)
        #expect(r25 == 5_400)
    }

    @Test func reAnchorsWhenTheCounterRestartsOrDrifts() {
        var clock = RoundClock()
        _ = clock.time(ofRound: 500, reportedInterval: 100, fallbackInterval: 100, hostTime: 1_000)
        // A new session counts from 1 again.
        let r26 = clock.time(ofRound: 1, reportedInterval: 100, fallbackInterval: 100, hostTime: 9_000)
        #expect(r26 == 9_000)
        // The host sees the round far later than the counter says: trust the host.
        let r27 = clock.time(ofRound: 2, reportedInterval: 100, fallbackInterval: 100, hostTime: 10_500)
        #expect(r27 == 10_500)
        // Within an interval ahead of the host, the counter's time stands ...
        _ = clock.time(ofRound: 3, reportedInterval: 100, fallbackInterval: 100, hostTime: 10_600)
        let ahead = clock.time(ofRound: 4, reportedInterval: 100, fallbackInterval: 100, hostTime: 10_650)
        #expect(ahead == 10_700)
        // ... further ahead, the anchor itself was read late: re-anchor on the host.
        let early = clock.time(ofRound: 5, reportedInterval: 100, fallbackInterval: 100, hostTime: 10_640)
        #expect(early == 10_640)
    }

    @Test func usesTheConfiguredIntervalWhenTheRadioReportsNone() {
        var clock = RoundClock()
        _ = clock.time(ofRound: 1, reportedInterval: 0, fallbackInterval: 100, hostTime: 0)
        let r30 = clock.time(ofRound: 3, reportedInterval: 0, fallbackInterval: 100, hostTime: 230)
        #expect(r30 == 200)
    }
}

@Suite struct NearestTests {
    @Test func followsTheClosestPeerWithHysteresis() {
        var nearest = NearestTracker<String>()
        nearest.update(peer: "a", distance: 2.0, time: 0)
        #expect(nearest.current == .init(peer: "a", distance: 2.0, band: .medium))
        // b is closer, but not by enough to take over.
        nearest.update(peer: "b", distance: 1.9, time: 100)
        #expect(nearest.current?.peer == "a")
        nearest.update(peer: "b", distance: 1.7, time: 200)
        #expect(nearest.current == .init(peer: "b", distance: 1.7, band: .medium))
        nearest.update(peer: "b", distance: 1.2, time: 300)
        #expect(nearest.current == .init(peer: "b", distance: 1.2, band: .medium))
    }

    @Test func bandsChangeOnlyBeyondTheEdgeByTheHysteresis() {
        var nearest = NearestTracker<String>()
        var bands: [DistanceBand?] = []
        for distance in [0.9, 1.05, 1.15, 0.95, 0.25, 0.31, 4] {
            nearest.update(peer: "a", distance: distance, time: 0)
            bands.append(nearest.current?.band)
        }
        #expect(bands == [.near, .near, .medium, .medium, .immediate, .immediate, .far])
    }

    @Test func aLostOrSilentPeerHandsOverOrLeavesNoNearest() {
        var nearest = NearestTracker<String>()
        nearest.update(peer: "a", distance: 0.5, time: 0)
        nearest.update(peer: "b", distance: 2.5, time: 0)
        nearest.remove(peer: "a", now: 100)
        #expect(nearest.current?.peer == "b")
        nearest.expire(now: 2_000)
        #expect(nearest.current?.peer == "b")
        nearest.expire(now: 2_001)
        #expect(nearest.current == nil)
        nearest.update(peer: "c", distance: nil, time: 2_100)
        #expect(nearest.current == nil)
    }

    /// The tracker keeps the closest estimate between ranges instead of scanning every peer each
    /// time: on random traffic (ties, silent peers, losses, expiry) it must name the same peer,
    /// distance and band after every call as a plain scan of all current estimates does.
    @Test func keepingTheClosestBetweenRangesChangesNothing() {
        let config = ProximityConfig.default
        for seed in 1...20 {
            var random = SplitMix64(seed: UInt64(seed))
            var tracker = NearestTracker<Int>(config: config)
            var reference = ScanningNearest(config: config)
            var time: Int64 = 0
            for _ in 0..<3_000 {
                time += Int64.random(in: 0...60, using: &random)
                let peer = Int.random(in: 0..<12, using: &random)
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
    var latest: [Int: (distance: Double, time: Int64)] = [:]
    var nearest: (peer: Int, distance: Double, band: DistanceBand)?

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

/// Issue 29: a board without RSSI must not lose its bumps to a correction.
@Suite struct BoardWithoutLevelTests {
    static let dw3000 = RangeCorrection(table: .aps011PRF64, tableName: "aps011-prf64")

    /// APS011 Table 2 (64 MHz PRF): −11.0 cm at −61 dBm and stronger. Looked up at a reported
    /// level only; without one nothing is guessed, and a calibrated offset still applies.
    @Test func theBiasIsLookedUpAtAReportedLevelOnly() {
        #expect(abs(Self.dw3000.correct(0.03, rssi: -40) - 0.14) < 1e-9)
        #expect(abs(Self.dw3000.correct(0.03, rssi: -77) - 0.03) < 1e-9)
        #expect(Self.dw3000.correct(0.03, rssi: nil) == 0.03)
        var calibrated = Self.dw3000
        (calibrated.offsetMetres, calibrated.calibrated) = (-0.11, true)
        #expect(abs(calibrated.correct(-0.08, rssi: nil) - 0.03) < 1e-9)
    }

    /// The issue's board: a peer approaches, the board reads a steady 3 cm for two seconds with
    /// no RSSI, the peer leaves; four times. Each touch bumps once, decided within three rounds.
    @Test func aSteadyThreeCentimetreTouchWithoutRSSIBumpsEveryTime() {
        var tracker = ProximityTracker()
        var bumps: [Int] = []
        var time: Int64 = 0
        for touch in 0..<4 {
            var truth = Array(repeating: 1.5, count: 20)
            truth += (1...14).map { 1.5 - 0.098 * Double($0) }
            let touchIndex = truth.count
            truth += Array(repeating: 0.03, count: 20)
            truth += (1...15).map { 0.03 + 0.098 * Double($0) }
            for (index, distance) in truth.enumerated() {
                let changes = tracker.update(RangeSample(time: time, distance: Self.dw3000.correct(distance, rssi: nil)))
                if changes.contains(where: \.isContact) { bumps.append(index - touchIndex) }
                time += 100
            }
            #expect(bumps.count == touch + 1, "touch \(touch + 1)")
        }
        #expect(bumps.allSatisfy { (0...2).contains($0) }, "rounds after the first at 3 cm: \(bumps)")
    }

    /// Without a level an approach is a descent, so a board 25 cm short (uncalibrated) still
    /// sees one; a neighbour standing at 30 cm never descends and never bumps.
    @Test func anApproachIsADescentWhateverTheOffset() {
        var short = ProximityTracker()
        let approach = (0..<20).map { _ in 0.55 } + (1...6).map { 0.55 - 0.1 * Double($0) } + Array(repeating: -0.22, count: 10)
        #expect(contacts(short.feed(samples(approach))) == 1)
        var neighbour = ProximityTracker()
        var noise = Noise(seed: 22, sigma: 0.06)
        #expect(contacts(neighbour.feed(samples((0..<36_000).map { _ in noise.reading(0.30) }))) == 0)
    }
}
