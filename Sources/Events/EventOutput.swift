import Glibc
import Synchronization
import SystemPackage

/// Where finished lines go. Each `write(line:)` receives exactly one complete line.
package protocol EventOutput: Sendable {
    func write(line: String) throws
    /// Several complete lines at once, in order; outputs that can write them in one call do.
    func write(lines: [String]) throws
    /// Complete lines rendered one after another as UTF-8, line `i` ending at `lineEnds[i]`: the
    /// buffered stream writes its render buffer as it is, so a line costs no `String`. Outputs
    /// that take only `String`s get the lines as such (the default).
    func write(utf8 bytes: UnsafeRawBufferPointer, lineEnds: [Int]) throws
    /// Whether a write of up to `PIPE_BUF` bytes would return without waiting for a reader. When
    /// it would, the buffered stream writes on the emitting thread instead of waking its writer
    /// thread. Outputs that cannot tell say false (the default).
    func isWritableWithoutWaiting() -> Bool
}

extension EventOutput {
    package func write(lines: [String]) throws {
        for line in lines { try write(line: line) }
    }

    package func write(utf8 bytes: UnsafeRawBufferPointer, lineEnds: [Int]) throws {
        var start = 0
        try write(
            lines: lineEnds.map { end in
                defer { start = end }
                return String(decoding: bytes[start..<end], as: UTF8.self)
            })
    }

    package func isWritableWithoutWaiting() -> Bool { false }
}
