import Bridge
import Testing
@testable import Proximity

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

    /// The board: a peer approaches, the board reads a steady 3 cm for two seconds with
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
