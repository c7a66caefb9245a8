import ArgumentParser
import Bridge
import Events
import Foundation
import Logging
import PeerProtocol
import Proximity
import StreamIO
import Synchronization

/// `nearby-bridge calibrate`: the field procedure that measures this rig's UWB board against a
/// peer at known distances and files the board's offset in the settings file.
struct CalibrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Measure this rig's UWB board against a peer at known distances; file its offset in --config.",
        discussion: """
            Every UWB board reads distances too long or too short by a constant (its antenna \
            delay) until calibrated: a few centimetres to tens of centimetres, which decides \
            whether a touch is told from a hand-over. The procedure: start a reference peer (a \
            calibrated rig, ideally the same for every rig of the event), run this command with \
            the rig's radios, and when asked, put the two devices at each distance in turn \
            (antenna to antenna, line of sight, both held still, away from bodies and metal) and \
            press Enter; each distance is measured at --placements spots (move the pair together \
            30 cm or more between them: the multipath of one spot stays in all its readings). It \
            collects --rounds line-of-sight readings per step, corrects them for the \
            received-level bias, and computes the offset; it refuses (exit status 1, \
            reason on stderr) when readings are too few, spread too much, or the distances \
            disagree (the board's bias does not follow the table).

            The offset goes into --config under "calibration", keyed by the board (the `board` \
            of the `device` event: its USB serial, or its vendor data), and `run` subtracts it \
            from every reading. A JSON summary goes to stdout. With stdin not a terminal, a line \
            on stdin (or its end) starts each step, so the procedure can be scripted.

            The readings include the peer's board too: the offset is this board's only if the \
            reference peer's own offset is 0 or given with --reference-offset.
            """)

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice (default), warning, error.")
    var logLevel: Logger.Level?

    @Option(help: "Settings file to read the radios from and to write the offset into (created if missing).")
    var config: String

    @Option(help: "UWB board: tcp:HOST:PORT, usb, usb:BUS-PORT, usb:SERIAL or /dev/ttyACMn (default: from --config).")
    var uwb: UWBEndpoint?

    @Option(help: "Bluetooth backend: world:HOST:PORT/NODE or hciN (default: from --config).")
    var ble: BLEBackend?

    @Option(name: .customLong("at"), help: "A distance to measure at, metres, antenna to antenna (repeatable; default: 0.02 touching, then 1.00).")
    var distances: [Double] = []

    @Option(help: "Line-of-sight readings to collect at each step.")
    var rounds = 100

    @Option(help: "Spots to measure each distance at, moving the pair 30 cm or more between them (averages out multipath).")
    var placements = 2

    @Option(help: "Seconds to wait for the readings of one distance before giving up.")
    var stepTimeout = 60.0

    @Option(help: "The reference peer's own offset, metres (0 for a calibrated reference).")
    var referenceOffset = 0.0

    var distancesToMeasure: [Double] { distances.isEmpty ? [0.02, 1.00] : distances }
    /// Every distance at each placement in turn.
    var steps: [(distance: Double, placement: Int)] {
        distancesToMeasure.flatMap { d in (1...placements).map { (d, $0) } }
    }

    func validate() throws {
        guard distancesToMeasure.allSatisfy({ (0...10).contains($0) }) else {
            throw ValidationError("--at takes metres from 0 to 10, e.g. --at 0.02 --at 1.00")
        }
        guard Set(distancesToMeasure).count >= 2 else { throw ValidationError("give two different distances at least, e.g. --at 0.02 --at 1.00") }
        guard (1...5).contains(placements) else { throw ValidationError("--placements takes 1 to 5 (2 is a good default)") }
        guard rounds >= Calibration.minimumReadings else {
            throw ValidationError("--rounds must be \(Calibration.minimumReadings) or more (fewer cannot show the offset to a centimetre)")
        }
        guard stepTimeout > 0 else { throw ValidationError("--step-timeout must be positive, e.g. 60") }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)  // a reader that went away is a failed write: status 3
        let level = logLevel ?? .notice
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "nearby-bridge")
        let settings = FileManager.default.fileExists(atPath: config) ? try RunConfig.load(config) : RunConfig()
        guard let uwb = try uwb ?? settings.uwb.map({ try RunConfig.parse(UWBEndpoint.self, $0, key: "uwb") }) else {
            throw ValidationError("say which UWB board to calibrate: --uwb usb (or \"uwb\" in --config FILE)")
        }
        guard let ble = try ble ?? settings.ble.map({ try RunConfig.parse(BLEBackend.self, $0, key: "ble") }) else {
            throw ValidationError("say which Bluetooth adapter finds the peer: --ble hci0 (or \"ble\" in --config FILE)")
        }
        var bridgeConfig = BridgeConfig()
        try settings.applyRangeCorrection(to: &bridgeConfig)
        // Measure the board as it is: no offset of an earlier calibration.
        bridgeConfig.rangeCorrection.offsets = [:]
        bridgeConfig.uwb.countryCode = settings.countryCode
        if let dialect = settings.uwbDialect { bridgeConfig.uwbDialect = dialect }

        let loop = EventLoop(name: "node")
        let (transport, reconnect, adapter) = try RigRadios.open(uwb: uwb, ble: ble, loop: loop, logger: logger)
        let readings = CalibrationReadings()
        var random = SystemRandomNumberGenerator()
        let identity = NodeIdentity(
            peerID: PeerID(random.next()), name: "calibrate", group: settings.group.map(UInt16.init) ?? 1,
            card: ProfileCard(name: "calibrate"), uwbShortAddress: UInt16.random(in: 1...0xFFFE, using: &random))
        let node = BridgeNode(
            identity: identity, config: bridgeConfig, uwbTransport: transport, ble: adapter, events: EventStream(sinks: [readings]),
            time: SystemClock(), logger: logger, seed: random.next(), reconnectUWB: reconnect, loop: loop)
        try await node.start()
        let running = Task { await node.run() }
        let ticks = Task { await NodeTicks.run(node) }
        var collected: [Calibration.Step] = []
        for (index, (distance, placement)) in steps.enumerated() {
            let place = distance <= 0.03 ? "touching (\(Self.cm(distance)))" : "\(Self.metres(distance)) apart"
            let spot = placement == 1 ? "" : " at another spot (move both together 30 cm or more)"
            FileHandle.standardError.write(
                Data(
                    "Step \(index + 1) of \(steps.count): put the devices \(place)\(spot), antenna to antenna, hold them still, then press Enter.\n"
                        .utf8))
            await Self.waitForEnter()
            readings.start(lineOfSight: rounds)
            await readings.waitForStep(within: .seconds(stepTimeout))
            collected.append(Calibration.Step(trueMetres: distance, readings: readings.stop()))
            logger.notice("collected \(collected.last!.readings.count) readings at \(Self.metres(distance))")
        }
        ticks.cancel()
        await node.stop()
        await running.value

        let board = readings.board ?? "unknown"
        let correction = bridgeConfig.rangeCorrection.correction(forBoard: board)
        var summary: [String: Any] = [
            "board": board, "bias": correction.table == nil ? "none" : correction.tableName, "peer": readings.peer ?? NSNull(),
            "reference_offset": referenceOffset,
        ]
        let result: Calibration.Result
        do {
            result = try Calibration.solve(collected, correction: correction)
        } catch {
            summary["refused"] = error.description
            try Self.printJSON(summary, logger: logger)
            logger.error("calibration refused: \(error)")
            throw ExitCode(1)
        }
        let offset = result.offset - referenceOffset
        summary["offset"] = Self.rounded(offset)
        summary["steps"] = result.steps.map(Self.describe)
        try Self.file(offset: offset, board: board, peer: readings.peer, in: config, distances: result.distances)
        summary["written"] = config
        try Self.printJSON(summary, logger: logger)
        logger.notice("board \(board): offset \(Self.cm(offset)), filed in \(config)")
    }

    /// Writes the offset under "calibration" → board, keeping everything else in the file.
    static func file(offset: Double, board: String, peer: String?, in path: String, distances: [Double]) throws {
        var object: [String: Any] = [:]
        if let data = FileManager.default.contents(atPath: path), !data.isEmpty {
            guard let existing = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ValidationError("--config \(path) is not a JSON object; not writing into it")
            }
            object = existing
        }
        var calibration = object["calibration"] as? [String: Any] ?? [:]
        calibration[board] = [
            "offset": rounded(offset), "date": ISO8601DateFormatter().string(from: Date()), "reference": peer.map { $0 as Any } ?? NSNull(),
            "distances": distances.map(rounded),
        ]
        object["calibration"] = calibration
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        do {
            try (data + Data("\n".utf8)).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw ValidationError("cannot write --config \(path): \(error.localizedDescription)")
        }
    }

    static func describe(_ step: Calibration.StepResult) -> [String: Any] {
        [
            "distance": rounded(step.trueMetres), "readings": step.readings, "offset": rounded(step.offset), "spread": rounded(step.spread),
            "rssi": step.rssi ?? NSNull(), "offset_without_bias_table": rounded(step.offsetWithoutTable),
        ]
    }

    /// The summary, one line on stdout; a failed stdout ends the command with status 3, as `run`.
    static func printJSON(_ object: [String: Any], logger: Logger) throws {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        do {
            try StandardOutput().write(line: String(decoding: data, as: UTF8.self) + "\n")
        } catch {
            logger.critical("stdout failed: \(error); the summary was not written")
            throw ExitCode(ExitStatus.outputFailed)
        }
    }

    /// Returns when a line (or the end of input) arrives on stdin, read on a thread of its own
    /// since `readLine` blocks.
    static func waitForEnter() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            IOThread.detach(name: "calibrate-stdin") {
                _ = readLine()
                done.resume()
            }
        }
    }

    static func rounded(_ metres: Double) -> Double { (metres * 1000).rounded() / 1000 }
    static func cm(_ metres: Double) -> String { "\(Int((metres * 100).rounded())) cm" }
    static func metres(_ metres: Double) -> String { String(format: "%.2f m", metres) }
}
