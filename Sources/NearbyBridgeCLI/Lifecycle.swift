import ArgumentParser
import Events
import Foundation
import Logging
import Synchronization

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

/// Why the process stops.
enum StopReason: Sendable {
    case signal(Int32)
    case outputFailed(any Error)
}

/// The one way a command ends: SIGINT, SIGTERM and a failed stdout all request the same stop,
/// which runs every registered stop action once (stop the nodes, stop waiting for stdout).
final class StopRequest: Sendable {
    private struct State {
        var reason: StopReason?
        var actions: [@Sendable (StopReason) -> Void] = []
    }
    private let state = Mutex(State())
    private let requested = Atomic<Bool>(false)

    /// Records the first reason and runs the stop actions; later requests change nothing.
    /// Returns false if a stop was already requested.
    @discardableResult
    func request(_ reason: StopReason) -> Bool {
        let actions: [@Sendable (StopReason) -> Void]? = state.withLock { state in
            guard state.reason == nil else { return nil }
            state.reason = reason
            defer { state.actions = [] }
            return state.actions
        }
        guard let actions else { return false }
        requested.store(true, ordering: .releasing)
        for action in actions { action(reason) }
        return true
    }

    /// Runs `action` when the stop is requested, or now if it already was.
    func onStop(_ action: @escaping @Sendable (StopReason) -> Void) {
        let already: StopReason? = state.withLock { state in
            if let reason = state.reason { return reason }
            state.actions.append(action)
            return nil
        }
        if let already { action(already) }
    }

    var isRequested: Bool { requested.load(ordering: .acquiring) }
    var reason: StopReason? { state.withLock { $0.reason } }
}

/// Turns SIGINT and SIGTERM into a stop request; a second one while stopping exits at once
/// (128 + the signal's number), for a shutdown that hangs. Keep it alive while signals matter.
final class StopSignal: @unchecked Sendable {  // the sources are only cancelled in deinit
    private let sources: [any DispatchSourceSignal]

    init(_ stop: StopRequest, logger: Logger) {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let name = number == SIGINT ? "SIGINT" : "SIGTERM"
                if stop.request(.signal(number)) {
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

/// What a command that writes events works with: the stream on stdout, the logger, and the
/// stop request that signals and a failed stdout raise.
struct CommandContext: Sendable {
    let events: EventStream
    let logger: Logger
    let stop: StopRequest
    private let signals: StopSignal?

    /// After a stop request, how long the last lines may take to reach a stalled reader.
    static let drainTimeout: Duration = .seconds(1)

    init(events: EventStream, logger: Logger, stop: StopRequest, handlesSignals: Bool) {
        self.events = events
        self.logger = logger
        self.stop = stop
        self.signals = handlesSignals ? StopSignal(stop, logger: logger) : nil
        stop.onStop { [events] _ in events.stopWaiting(within: Self.drainTimeout) }
    }

    /// Runs the command's body, then waits for stdout to take the remaining lines (at most
    /// `drainTimeout` once a stop was requested) and ends with the right exit status: the
    /// body's error if it threw, `ExitStatus.outputFailed` if stdout failed or kept lines.
    func run(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
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
