import ArgumentParser
import Doctor
import Events
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import WebView

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
