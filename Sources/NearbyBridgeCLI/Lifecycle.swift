import ArgumentParser
import Doctor
import Events
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import WebView

/// The process's exit statuses (also in the commands' --help and README "Exit codes").
enum ExitStatus {
    /// Stopped by SIGINT/SIGTERM or the scenario/capture ended, every event written.
    static let stopped: Int32 = 0
    /// An error: a radio or file that could not be opened, a failure while starting.
    static let failure: Int32 = 1
    /// stdout failed (closed, broken pipe, disk full) or its reader did not take the last lines
    /// within a second of the stop; the radios were still shut down properly first.
    static let outputFailed: Int32 = 3

    /// What --help says, in every command that writes events.
    static let help = """
        Exit status: 0 stopped (SIGINT, SIGTERM, end of the scenario or capture) with every \
        event written; 1 an error, e.g. a radio that cannot be opened or fails while starting; \
        3 stdout failed (closed, broken pipe, disk full) or its reader did not take the last \
        lines within 1 s of the stop, after the same clean shutdown; 64 invalid options or \
        settings. A second SIGINT/SIGTERM during the shutdown exits at once (130/143).
        """
}

/// A stop was asked for: SIGINT/SIGTERM, or stdout failed. The first request stops waiting for
/// stdout, so a stalled reader holds up neither the nodes' shutdown nor the exit (the drain
/// ends within `CommandContext.drainTimeout`). The end of a scenario or capture is not a stop
/// request: stdout then gets every line, however slow its reader.
///
/// It only records; what stops the work is the service group's graceful shutdown (see
/// `CommandContext.run`).
final class StopRequest: Sendable {
    private let requested = Atomic<Bool>(false)
    private let outputFailed = Atomic<Bool>(false)
    private let events: EventStream

    init(events: EventStream) {
        self.events = events
    }

    /// Returns false if a stop was already requested.
    @discardableResult
    func request(becauseOutputFailed: Bool = false) -> Bool {
        if becauseOutputFailed { outputFailed.store(true, ordering: .releasing) }
        guard !requested.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        events.stopWaiting(within: CommandContext.drainTimeout)
        return true
    }

    var isRequested: Bool { requested.load(ordering: .acquiring) }
    /// The stop came from a failed stdout: a signal now finds the process already stopping.
    var isForFailedOutput: Bool { outputFailed.load(ordering: .acquiring) }
}

/// Beside the service group's own handler of SIGINT and SIGTERM (which turns the first one into
/// the graceful shutdown and then ignores them), this one records the stop request and makes a
/// signal that arrives while stopping exit at once (128 + the signal's number), for a shutdown
/// that hangs. ServiceGroup's `cancellationSignals` cannot do that: they may not overlap the
/// graceful ones, and cancelling a hung shutdown would not end it. Installed before the group
/// runs, it also keeps a signal during start-up from killing the process: the request is seen
/// when the work starts. Keep it alive while signals matter.
final class SecondSignalExit: @unchecked Sendable {  // the sources are only cancelled in deinit
    private let sources: [any DispatchSourceSignal]
    /// Whether a signal came already. (Not `stop.isRequested`: the group, which sees the same
    /// signal, may have had the work request the stop before this handler runs.)
    private final class Signalled: Sendable {
        let flag = Atomic<Bool>(false)
    }

    init(_ stop: StopRequest, logger: Logger) {
        var sources: [any DispatchSourceSignal] = []
        let signalled = Signalled()
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let name = number == SIGINT ? "SIGINT" : "SIGTERM"
                if !signalled.flag.exchange(true, ordering: .acquiringAndReleasing), !stop.isForFailedOutput {
                    stop.request()
                    logger.notice("\(name): stopping")
                } else {
                    logger.critical("\(name) while stopping: exiting now, without finishing the shutdown")
                    _exit(128 + number)
                }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

/// stdout failed; the group ended because of it (the exit status says so, not this error).
struct StdoutFailed: Error {
    var error: any Error
}

/// The event output as a service: when stdout fails it requests the stop and ends the group
/// gracefully, as a signal does (by throwing `StdoutFailed`, its failure behaviour being the
/// group's graceful shutdown). It is the first service, so the group shuts it down last.
struct EventOutputService: Service {
    let failures: AsyncStream<any Error>
    let endOfFailures: AsyncStream<any Error>.Continuation
    let stop: StopRequest

    func run() async throws {
        let failure: (any Error)? = await withGracefulShutdownHandler {
            for await failure in failures { return failure }
            return nil
        } onGracefulShutdown: { [endOfFailures] in
            endOfFailures.finish()
        }
        if let failure {
            stop.request(becauseOutputFailed: true)
            throw StdoutFailed(error: failure)
        }
    }
}

/// What a command that writes events works with: the stream on stdout, the logger, and the
/// stop request that signals and a failed stdout raise.
struct CommandContext: Sendable {
    let events: EventStream
    let logger: Logger
    let stop: StopRequest
    private let output: EventOutputService
    private let signals: SecondSignalExit?
    private let web: WebService?

    /// After a stop request, how long the last lines may take to reach a stalled reader.
    static let drainTimeout: Duration = .seconds(1)

    /// - Parameter failures: stdout's failure, as its sink reports it.
    init(
        events: EventStream, logger: Logger,
        failures: (stream: AsyncStream<any Error>, continuation: AsyncStream<any Error>.Continuation), handlesSignals: Bool,
        web: WebService? = nil
    ) {
        self.web = web
        self.events = events
        self.logger = logger
        let stop = StopRequest(events: events)
        self.stop = stop
        self.output = EventOutputService(failures: failures.stream, endOfFailures: failures.continuation, stop: stop)
        self.signals = handlesSignals ? SecondSignalExit(stop, logger: logger) : nil
    }

    /// Sets up the command's work (`setup` opens what it needs and returns the service that
    /// runs it), runs it beside the event output in a service group, then waits for stdout to
    /// take the remaining lines (at most `drainTimeout` once a stop was requested) and ends with
    /// the right exit status: the error if setup or the work threw, `ExitStatus.outputFailed` if
    /// stdout failed or kept lines.
    ///
    /// The group ends one way, its graceful shutdown, whatever the reason: SIGINT/SIGTERM (with
    /// `handlesSignals`), a failed stdout (the output service throws), the work's end (its
    /// service returns: the scenario or capture is over) or failure (it throws: e.g. a radio that
    /// does not answer). The work, the last service, is shut down first: a node says goodbye,
    /// deinitialises its sessions, removes its advertising and closes the board.
    func run(_ setup: () async throws -> any Service) async throws {
        do {
            let work = try await setup()
            let services = ([output, web, work] as [(any Service)?]).compactMap { $0 }.map {
                ServiceGroupConfiguration.ServiceConfiguration(
                    service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup)
            }
            let group = ServiceGroup(
                configuration: .init(
                    services: services, gracefulShutdownSignals: signals == nil ? [] : [.sigint, .sigterm], logger: logger))
            do {
                try await group.run()
            } catch is StdoutFailed {
                // Reported below, with what the drain says.
            }
        } catch {
            // What happened is the error's own text; how to fix it is doctor's (`nearby-bridge doctor`).
            if let remedy = Doctor.remedy(for: error) { logger.error("\(remedy)") }
            events.stopWaiting(within: Self.drainTimeout)
            let drained = events.drain()
            if drained.unwritten > 0 { logger.error("\(drained.unwritten) event lines were not written to stdout") }
            throw error
        }
        let drained = events.drain()
        withExtendedLifetime(signals) {}
        if let failure = drained.failure {
            logger.critical("stopped because stdout failed: \(failure); \(drained.unwritten) event lines were not written")
            throw ExitCode(ExitStatus.outputFailed)
        }
        if drained.unwritten > 0 {
            logger.critical(
                "stdout's reader did not take the last \(drained.unwritten) event lines within \(Self.drainTimeout) of the stop; they were not written")
            throw ExitCode(ExitStatus.outputFailed)
        }
    }
}

/// The web view as a service: serves until the group shuts down (after the work, so the page
/// sees the last events), and says where on stderr, with the token when one is needed.
struct WebService: Service {
    let server: WebServer
    let endpoint: HTTPEndpoint
    let token: String?
    let logger: Logger

    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            group.addTask {
                let port = try await server.listeningPort()
                let query = token.map { "/?token=\($0)" } ?? "/"
                logger.notice("web view on http://\(endpoint.host):\(port)\(query)")
            }
            try await withGracefulShutdownHandler {
                do {
                    while try await group.next() != nil {}
                } catch {
                    // Stopping closes the listener and every stream: what that throws is the stop.
                    guard Task.isShuttingDownGracefully else { throw error }
                }
            } onGracefulShutdown: {
                Task { await server.stop() }
            }
            group.cancelAll()
        }
    }
}
