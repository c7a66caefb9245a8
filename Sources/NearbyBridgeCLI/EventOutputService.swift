import ArgumentParser
import Doctor
import Events
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import WebView

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

/// stdout failed; the group ended because of it (the exit status says so, not this error).
struct StdoutFailed: Error {
    var error: any Error
}
