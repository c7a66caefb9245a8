import Bridge
import Testing
@testable import Proximity

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
