import Glibc
import Synchronization
import SystemPackage

/// Where finished lines go. Each `write(line:)` receives exactly one complete line.
package protocol EventOutput: Sendable {
    func write(line: String) throws
    /// Several complete lines at once, in order; outputs that can write them in one call do.
    func write(lines: [String]) throws
    /// Whether a write of up to `PIPE_BUF` bytes would return without waiting for a reader. When
    /// it would, the buffered stream writes on the emitting thread instead of waking its writer
    /// thread. Outputs that cannot tell say false (the default).
    func isWritableWithoutWaiting() -> Bool
}

extension EventOutput {
    package func write(lines: [String]) throws {
        for line in lines { try write(line: line) }
    }

    package func isWritableWithoutWaiting() -> Bool { false }
}
