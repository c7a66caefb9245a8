import Glibc
import SystemPackage

/// An accept loop that lasts as long as its listener. Before issue 35 the L2CAP accept loop
/// ended for good on its first error, so one EMFILE during a connection flood would have stopped
/// every incoming connection until a restart. Here an error is reported and the loop goes on;
/// errors in a row pause it, 10 ms doubling to 1 s, so a descriptor shortage (EMFILE, ENFILE)
/// or an error that persists does not spin a core, and the next connection ends the pause.
/// Interruptions, connections aborted before they were taken and "nothing to take" on a
/// non-blocking listener are retried at once, without a report.
package enum AcceptLoop {
    package static let firstPause = Duration.milliseconds(10)
    package static let longestPause = Duration.seconds(1)

    /// Takes connections from `next` until it says `.stopped`. `report` hears of each error with
    /// how many came in a row and the pause that follows it.
    package static func run<Connection>(
        next: () -> AcceptOutcome<Connection>,
        pause: (Duration) -> Void = AcceptLoop.sleep,
        report: (_ error: Errno, _ inARow: Int, _ pausing: Duration) -> Void,
        accepted: (Connection) -> Void
    ) {
        var inARow = 0
        while true {
            switch next() {
            case .stopped:
                return
            case .accepted(let connection):
                inARow = 0
                accepted(connection)
            case .failed(let error) where [.interrupted, .connectionAbort, .resourceTemporarilyUnavailable, .wouldBlock].contains(error):
                continue
            case .failed(let error):
                inARow += 1
                let wait = min(longestPause, firstPause * (1 << min(inARow - 1, 10)))
                report(error, inARow, wait)
                pause(wait)
            }
        }
    }

    package static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
