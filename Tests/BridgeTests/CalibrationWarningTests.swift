import Events
import Logging
import Testing
import UCI

@testable import Bridge
@testable import Simulation

/// `run` warns once when a board reads short by more than its correction explains: a board 15 cm
/// short whose peer keeps touching it is called uncalibrated; the same world with calibrated
/// boards is not.
@Suite struct CalibrationWarningTests {
    static func warnings(rigOffset: Double, seed: UInt64 = 1) async throws -> [String] {
        let scenario = Scenario(
            name: "touching", duration: 150, group: 1,
            nodes: [
                .init(name: "rig", path: [.init(t: 0, x: 0, y: 0)], boardOffset: rigOffset),
                .init(
                    name: "alice",
                    path: [.init(t: 0, x: 1.5, y: 0), .init(t: 2, x: 1.5, y: 0), .init(t: 4, x: 0.02, y: 0), .init(t: 7, x: 0.02, y: 0),
                           .init(t: 9, x: 1.5, y: 0), .init(t: 10, x: 1.5, y: 0)],
                    card: nil, loop: true),
            ])
        let sink = CollectedLog()
        var logger = Logger(label: "test") { _ in CollectedLog.Handler(sink: sink) }
        logger.logLevel = .warning
        var options = SimulationDriver.Options()
        options.speed = nil
        options.seed = seed
        options.epochMilliseconds = fixedEpoch
        let driver = SimulationDriver(
            scenario: scenario, options: options, events: EventStream(output: CollectedEvents(), includesRanges: false), logger: logger)
        try await driver.run()
        return sink.lines.withLock { $0 }.filter { $0.contains("looks uncalibrated") }
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func aBoardFifteenCentimetresShortIsCalledUncalibratedOnce(seed: UInt64) async throws {
        let short = try await Self.warnings(rigOffset: -0.15, seed: seed)
        // The pair reads short on both sides: each node's watch warns, once.
        #expect((1...2).contains(short.count), "\(short)")
        #expect(short.allSatisfy { $0.hasPrefix("warning the UWB board reads short") })
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func calibratedBoardsAreNotWarnedAbout(seed: UInt64) async throws {
        let warnings = try await Self.warnings(rigOffset: 0, seed: seed)
        #expect(warnings.isEmpty, "\(warnings)")
    }
}
