import ArgumentParser
import Doctor
import Events
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import WebView

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
