import Glibc
import Testing
@testable import Events
import Synchronization

/// An output that blocks every write until opened, like a pipe whose reader is busy.
final class GatedOutput: EventOutput {
    private let gate = Mutex(false)
    private let storage = Mutex<[String]>([])
    func open() { gate.withLock { $0 = true } }
    func write(line: String) throws {
        while !gate.withLock({ $0 }) { usleep(1000) }
        storage.withLock { $0.append(line) }
    }
    var lines: [String] { storage.withLock { $0 } }
}
