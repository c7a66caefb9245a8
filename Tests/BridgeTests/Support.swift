import Events
import Foundation
import Logging
import Simulation
import Synchronization

/// 2026-01-01T00:00:00Z: a fixed epoch makes timestamps part of the golden stream too.
let fixedEpoch: Int64 = 1_767_225_600_000

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let quietLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return logger
}()

/// Log lines as a test reads them: a handler that appends each event, formatted by the test
/// (level and message unless it says otherwise), to one shared list.
final class CollectedLog: Sendable {
    let lines = Mutex<[String]>([])

    struct Handler: LogHandler {
        let sink: CollectedLog
        var format: @Sendable (LogEvent) -> String = { "\($0.level) \($0.message)" }
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { sink.lines.withLock { $0.append(format(event)) } }
    }
}

/// A driver that runs `scenario` as fast as possible into the returned collector, for tests that
/// inject faults into its world or read its identities.
func fastDriver(
    _ scenario: Scenario, seed: UInt64 = 1, ranges: Bool, duration: Double? = nil, epoch: Int64 = fixedEpoch
) -> (driver: SimulationDriver, output: CollectedEvents) {
    let output = CollectedEvents()
    var options = SimulationDriver.Options()
    options.seed = seed
    options.speed = nil
    options.duration = duration
    options.epochMilliseconds = epoch
    let driver = SimulationDriver(
        scenario: scenario, options: options, events: EventStream(output: output, includesRanges: ranges), logger: quietLogger)
    return (driver, output)
}

/// Runs a scenario as fast as possible and returns every line written.
func runScenario(
    _ scenario: Scenario, seed: UInt64 = 1, ranges: Bool, duration: Double? = nil, epoch: Int64 = fixedEpoch
) async throws -> [String] {
    let (driver, output) = fastDriver(scenario, seed: seed, ranges: ranges, duration: duration, epoch: epoch)
    try await driver.run()
    return output.lines
}

func parse(_ lines: [String]) throws -> [[String: Any]] {
    try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
}

/// Validates lines with the independent `jsonschema` package through scripts/validate-events.py.
/// Python comes from $NEARBY_BRIDGE_PYTHON or the .venv that scripts/test creates.
func validateAgainstSchema(_ lines: [String]) throws -> (status: Int32, message: String) {
    let python = ProcessInfo.processInfo.environment["NEARBY_BRIDGE_PYTHON"]
        ?? packageRoot.appendingPathComponent(".venv/bin/python3").path
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("events-\(UUID().uuidString).jsonl")
    try lines.joined().write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [packageRoot.appendingPathComponent("scripts/validate-events.py").path, file.path]
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, message)
}

/// Peer ids (as events print them) of a scenario's nodes for seed 1, by node name.
func peerIDs(of scenario: Scenario, seed: UInt64 = 1) -> [String: String] {
    fastDriver(scenario, seed: seed, ranges: false).driver.identities.mapValues(\.peerID.description)
}
