import ArgumentParser
import Bridge
import Capture
import Events
import Foundation
import Logging
import Proximity
import WebView

/// Options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @Flag(name: .long, help: "Also write a `range` event for every ranging round.")
    var ranges = false

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice (default), warning, error.")
    var logLevel: Logger.Level?

    @Option(help: "Record the radios' traffic and the events in DIR: per node uci.pcap (link type 299) and ble.pcap (link type 201), and events.jsonl; files rotate at 64 MB.", completion: .directory)
    var capture: String?

    @Option(help: "Serve a live web view at [ADDR:]PORT: 8080 is this machine only; 0.0.0.0:8080 reaches phones on the rig's network and then needs the token printed on stderr.")
    var http: HTTPEndpoint?

    @Option(help: "The token the web view asks for when bound beyond this machine (default: a new random one each start).")
    var httpToken: String?

    /// Opens the capture directory, if one was asked for.
    func openCapture() throws -> CaptureDirectory? {
        try capture.map { try CaptureDirectory(path: $0) }
    }

    /// Sets up stderr logging and the process's single event stream on stdout (and in the
    /// capture); a config file's values apply where the command line is silent. With
    /// `handlesSignals`, SIGINT and SIGTERM stop the command's work gracefully (see
    /// `CommandContext.run`); without, they end the process as usual. A stdout that fails stops
    /// the work too. Throws `ExitStatus.outputFailed` when stdout is closed from the start.
    /// `moreSinks` adds destinations that need the logger (the MQTT output).
    func bootstrap(
        config: RunConfig = RunConfig(), capture: CaptureDirectory? = nil, handlesSignals: Bool = true,
        thresholds: ProximityConfig = .default, moreSinks: (Logger) throws -> [any EventSink] = { _ in [] }
    ) throws -> CommandContext {
        signal(SIGPIPE, SIG_IGN)
        let level = logLevel ?? config.logLevel.flatMap(Logger.Level.init(rawValue:)) ?? .notice
        let ranges = self.ranges || config.ranges == true
        LoggingSystem.bootstrap { label in
            var handler = RateLimitedLogHandler(StreamLogHandler.standardError(label: label), label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "nearby-bridge")
        do {
            try StandardOutput.checkOpen()
        } catch {
            logger.critical("\(error): there is nowhere to write events; not starting")
            throw ExitCode(ExitStatus.outputFailed)
        }
        if StandardOutput.endTornLine() {
            logger.warning("the event file on stdout ended in a line cut short (a power cut?): it is left alone on its line, and events go on after it")
        }
        let failures = AsyncStream<any Error>.makeStream(bufferingPolicy: .bufferingOldest(1))
        // Where events go, each sink with its own buffer and policy.
        var sinks: [any EventSink] = [
            // Buffered: a slow reader of stdout sheds range events instead of stalling the radios.
            // A failed stdout stops the command like a signal does; it then exits with status 3.
            JSONLinesSink(output: StandardOutput(), includesRanges: ranges, bufferedLines: 4096) { error in
                logger.error("stdout failed: \(error); stopping")
                failures.continuation.yield(error)
            }
        ]
        // The complete record: never sheds.
        if let capture { sinks.append(try capture.eventSink(includesRanges: ranges)) }
        // The web view: its own bounded backlog, which slow browsers fall behind in.
        let web = try http.map { endpoint in
            let token = endpoint.isLoopback ? httpToken : httpToken ?? HTTPEndpoint.newToken()
            return try WebServer(host: endpoint.host, port: endpoint.port, token: token, thresholds: thresholds)
        }
        if let web {
            sinks.append(web.sink)
            web.sink.metrics.bootstrap()
        }
        sinks += try moreSinks(logger)
        let events = EventStream(sinks: sinks)
        return CommandContext(
            events: events, logger: logger, failures: failures, handlesSignals: handlesSignals,
            web: web.map { WebService(server: $0, endpoint: http!, token: $0.token, logger: logger) })
    }
}
