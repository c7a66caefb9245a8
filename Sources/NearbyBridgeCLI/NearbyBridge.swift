import ArgumentParser
import Capture
import Events
import Foundation
import Logging
import Synchronization

@main
struct NearbyBridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby-bridge",
        abstract: "Turn a UWB board and a Bluetooth LE adapter into a nearby-interaction sensor.",
        discussion: """
            Proximity events (device, peer.found, near, far, bump, peer.lost, and range with \
            --ranges) go to stdout as JSON Lines, one event per line; logs go to stderr.

            Try it without hardware:   nearby-bridge demo
            Range against a world:     nearby-bridge world   (then, in another shell)
                                       nearby-bridge run --uwb tcp:127.0.0.1:7000 --ble world:127.0.0.1:7100/field-rig
            """,
        subcommands: [Demo.self, Run.self, WorldCommand.self, Devices.self, DoctorCommand.self, PlotCommand.self, ReplayCommand.self])
}

/// Options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @Flag(name: .long, help: "Also write a `range` event for every ranging round.")
    var ranges = false

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice (default), warning, error.")
    var logLevel: Logger.Level?

    @Option(help: "Record the radios' traffic and the events in DIR: per node uci.pcap (link type 299) and ble.pcap (link type 201), and events.jsonl; files rotate at 64 MB.", completion: .directory)
    var capture: String?

    /// Opens the capture directory, if one was asked for.
    func openCapture() throws -> CaptureDirectory? {
        try capture.map { try CaptureDirectory(path: $0) }
    }

    /// Sets up stderr logging and the process's single event stream on stdout (and in the
    /// capture); a config file's values apply where the command line is silent.
    func bootstrap(config: RunConfig = RunConfig(), capture: CaptureDirectory? = nil) throws -> (EventStream, Logger) {
        signal(SIGPIPE, SIG_IGN)
        let level = logLevel ?? config.logLevel.flatMap(Logger.Level.init(rawValue:)) ?? .notice
        let ranges = self.ranges || config.ranges == true
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "nearby-bridge")
        let output: any EventOutput = try capture?.events(teeing: StandardOutputEvents()) ?? StandardOutputEvents()
        // Buffered: a slow reader of stdout sheds range events instead of stalling the radios.
        // Commands drain the stream before they return.
        let events = EventStream(output: output, includesRanges: ranges, bufferedLines: 4096) { error in
            logger.critical("stdout is gone (\(error)); stopping")
            Foundation.exit(0)
        }
        return (events, logger)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Turns SIGINT and SIGTERM into a clean stop. Keep it alive for as long as signals matter.
final class StopSignal {
    private let sources: [any DispatchSourceSignal]
    let flag = ManagedAtomicFlag()

    init(onStop: @escaping @Sendable () -> Void = {}) {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            sources.append(source)
        }
        self.sources = sources
        for source in sources {
            source.setEventHandler { [flag] in
                flag.set()
                onStop()
            }
            source.resume()
        }
    }
}

final class ManagedAtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
