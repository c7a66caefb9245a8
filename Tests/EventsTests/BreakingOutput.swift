import Glibc
import Testing
@testable import Events
import Synchronization

/// Writes until its `failingAt`th write, which fails with EPIPE; counts every attempt.
final class BreakingOutput: EventOutput {
    private let state = Mutex<(attempts: Int, written: [String])>((0, []))
    private let failingAt: Int
    private let writable: Bool
    init(failingAt: Int, writableWithoutWaiting: Bool) {
        self.failingAt = failingAt
        writable = writableWithoutWaiting
    }
    func write(line: String) throws { try write(lines: [line]) }
    func write(lines: [String]) throws {
        try state.withLock { state in
            state.attempts += 1
            if state.attempts >= failingAt { throw OutputError(errno: EPIPE) }
            state.written += lines
        }
    }
    func isWritableWithoutWaiting() -> Bool { writable }
    var attempts: Int { state.withLock { $0.attempts } }
    var written: [String] { state.withLock { $0.written } }
}
