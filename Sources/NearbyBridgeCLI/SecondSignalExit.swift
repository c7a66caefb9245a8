import ArgumentParser
import Doctor
import Events
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import WebView

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
