import Bridge
import Proximity
import Simulation
import Testing

/// The calibration solver against the simulation's physics: readings drawn from `RadioModel`
/// with a known antenna-delay offset must give that offset back, and readings that cannot support
/// one must be refused with the reason.
@Suite struct CalibrationTests {
    static let dw3000 = RangeCorrection(table: .aps011PRF64, tableName: "aps011-prf64")

    /// `count` rounds at `distance` from a radio whose boards add `offset`, as the board reports
    /// them (whole centimetres, RSSI in half dB).
    static func step(_ distance: Double, offset: Double, radio: RadioModel = RadioModel(), count: Int = 150, seed: UInt64) -> Calibration.Step {
        var random = SplitMix64(seed: seed)
        var channel = RadioModel.PairChannel()
        var readings: [Calibration.Reading] = []
        for round in 0..<count {
            guard
                let reading = radio.rangingReading(
                    trueDistance: distance, time: Double(round) / 10, boardOffsets: offset, channel: &channel, random: &random)
            else { continue }
            readings.append(.init(metres: (reading.metres * 100).rounded() / 100, rssi: reading.rssi, nonLineOfSight: reading.nonLineOfSight))
        }
        return Calibration.Step(trueMetres: distance, readings: readings)
    }

    @Test(arguments: [0.17, -0.08, 0.0])
    func theOffsetOfABoardComesBackWithinTheMultipathOfOneSpot(offset: Double) throws {
        let result = try Calibration.solve(
            [Self.step(0.02, offset: offset, seed: 1), Self.step(1.00, offset: offset, seed: 2)], correction: Self.dw3000)
        // One spot's multipath (σ 5–7.5 cm, standing still) is in every reading of the step: the
        // two steps average it down to about 4.5 cm.
        #expect(abs(result.offset - offset) < 0.06, "offset \(result.offset) for a board that adds \(offset)")
        #expect(result.steps.count == 2)
        #expect(result.steps.allSatisfy { $0.readings >= Calibration.minimumReadings })
    }

    @Test func withoutTheBiasTableTheSameReadingsReadAboutTenCentimetresShortAtOneMetre() throws {
        var quiet = RadioModel()
        quiet.multipathSigma = 0
        quiet.shadowingPerMinute = 0
        let result = try Calibration.solve(
            [Self.step(0.02, offset: 0, radio: quiet, seed: 3), Self.step(1.00, offset: 0, radio: quiet, seed: 4)],
            correction: Self.dw3000)
        #expect(abs(result.offset) < 0.02)
        // APS011 at −63 dBm (1 m in the link budget): −10.5 cm.
        let atOneMetre = try #require(result.steps.last)
        #expect(abs(atOneMetre.offsetWithoutTable - -0.105) < 0.02)
    }

    @Test func tooFewReadingsAreRefused() {
        #expect(throws: Calibration.Refusal.self) {
            try Calibration.solve(
                [Self.step(0.02, offset: 0, count: 30, seed: 5), Self.step(1.00, offset: 0, seed: 6)], correction: Self.dw3000)
        }
        #expect(throws: Calibration.Refusal.needsTwoDistances) {
            try Calibration.solve([Self.step(1.00, offset: 0, seed: 7)], correction: Self.dw3000)
        }
    }

    /// Why `solve` refused `steps` with the DW3000 table (nil: it did not).
    static func refusal(_ steps: [Calibration.Step]) -> Calibration.Refusal? {
        do {
            _ = try Calibration.solve(steps, correction: dw3000)
            return nil
        } catch {
            return error
        }
    }

    @Test func readingsThatSpreadTooMuchAreRefused() {
        var noisy = RadioModel()
        noisy.sigma = 0.30
        let refusal = Self.refusal([Self.step(0.02, offset: 0, radio: noisy, seed: 8), Self.step(1.00, offset: 0, radio: noisy, seed: 9)])
        guard case .tooNoisy = refusal else { Issue.record("a σ 30 cm radio: \(refusal.map(\.description) ?? "calibrated")"); return }
    }

    /// A board whose firmware corrects the bias itself, calibrated with the table: the table's
    /// correction differs by 11 cm between contact and 5 m, so the steps disagree.
    @Test func aBoardThatDoesNotFollowTheTableIsRefusedAndTheMessageSaysWhy() {
        var corrected = RadioModel()
        corrected.levelBias = .none
        corrected.multipathSigma = 0
        corrected.shadowingPerMinute = 0
        let refusal = Self.refusal(
            [Self.step(0.02, offset: 0, radio: corrected, seed: 10), Self.step(5.00, offset: 0, radio: corrected, seed: 11)])
        guard let refusal, case .inconsistent(let offsets, _, let withoutTable) = refusal else {
            Issue.record("inconsistent steps: \(refusal.map(\.description) ?? "accepted")")
            return
        }
        #expect(abs(offsets[0] - offsets[1]) > 0.10)
        #expect(abs(withoutTable[0] - withoutTable[1]) < 0.03)
        #expect(refusal.description.contains("\"rangeBias\": \"none\""))
    }
}
