import Events
import Proximity
import Testing
import UCI

@testable import Bridge

/// A board that flags a round OK but reports a distance it cannot have measured (issue 16: a
/// stream of 0xFFFF was written as 655.35 m and dragged the filtered distance there).
@Suite struct ImpossibleDistanceTests {
    static func round(_ sequence: UInt32, centimetres: UInt16) -> (TwoWayMeasurement, RangeData) {
        let measurement = TwoWayMeasurement(address: .short(0x0B0B), status: .ok, lineOfSight: .lineOfSight, distanceCentimetres: centimetres)
        return (measurement, RangeData(sequenceNumber: sequence, session: 1, rangingIntervalMilliseconds: 100, measurements: [measurement]))
    }

    @Test(arguments: [UInt16(0xFFFF), 0xFFFE, 30_001])
    func isAFailedRoundThatLeavesTheEstimateAlone(centimetres: UInt16) {
        var processor = RangeProcessor(peer: "b", config: BridgeConfig())
        var changes: [ProximityChangeKind] = []
        for sequence in 1...20 {
            let (measurement, data) = Self.round(UInt32(sequence), centimetres: 40)
            changes += processor.process(measurement, of: data, hostTime: Int64(sequence) * 100).changes.map(ProximityChangeKind.init)
        }
        let settled = try! #require(processor.proximity.filtered)
        for sequence in 21...40 {
            let (measurement, data) = Self.round(UInt32(sequence), centimetres: centimetres)
            let outcome = processor.process(measurement, of: data, hostTime: Int64(sequence) * 100)
            #expect(outcome.invalid)
            #expect(!outcome.measured)
            #expect(outcome.range.distance == nil)
            changes += outcome.changes.map(ProximityChangeKind.init)
        }
        #expect(abs((processor.proximity.filtered ?? settled) - settled) < 0.05)
        #expect(!changes.contains(.far), "impossible readings must not make the peer far")
    }

    @Test func theLongestPlausibleReadingStillCounts() {
        var processor = RangeProcessor(peer: "b", config: BridgeConfig())
        let (measurement, data) = Self.round(1, centimetres: RangeProcessor.maximumDistanceCentimetres)
        let outcome = processor.process(measurement, of: data, hostTime: 100)
        #expect(!outcome.invalid)
        #expect(outcome.range.distance == 300)
    }

    /// Q9.7 degrees: 180° is 0x5A00; FiRa's figure of merit is a percentage.
    @Test func anglesOutsideWhatABoardCanMeasureAreLeftOut() {
        #expect(RangeProcessor.angle(AngleMeasurement(rawQ9_7: 0x5A00, figureOfMerit: 90), within: 180) == 180)
        #expect(RangeProcessor.angle(AngleMeasurement(rawQ9_7: 0x5A01, figureOfMerit: 90), within: 180) == nil)
        #expect(RangeProcessor.angle(AngleMeasurement(rawQ9_7: -0x2D00, figureOfMerit: 50), within: 90) == -90)
        #expect(RangeProcessor.angle(AngleMeasurement(rawQ9_7: 0x3000, figureOfMerit: 50), within: 90) == nil)
        #expect(RangeProcessor.angle(AngleMeasurement(rawQ9_7: 0x0100, figureOfMerit: 0), within: 180) == nil)
        #expect(RangeProcessor.angle(AngleMeasurement(rawQ9_7: 0x0100, figureOfMerit: 101), within: 180) == nil)
    }

    @Test func statsCountThemOnlyWhenThereAreSome() {
        let quiet = JSONLine.render(
            Event(node: "1", body: .stats(.init(peers: 1, ranging: 1, budget: 4, shedRanges: 0, shedInputs: 0, evicted: 0))), seq: 1,
            timestampMilliseconds: 0)
        #expect(!quiet.contains("invalid_readings"))
        let some = JSONLine.render(
            Event(node: "1", body: .stats(.init(peers: 1, ranging: 1, budget: 4, shedRanges: 0, shedInputs: 0, evicted: 0, invalidReadings: 3))),
            seq: 1, timestampMilliseconds: 0)
        #expect(some.contains(#""invalid_readings":3"#))
    }
}

/// Proximity's decisions without their distances.
private enum ProximityChangeKind: Equatable {
    case near, far, contact

    init(_ change: ProximityChange) {
        switch change {
        case .near: self = .near
        case .far: self = .far
        case .contact: self = .contact
        }
    }
}
