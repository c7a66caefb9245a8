import Glibc
import Synchronization
import SystemPackage

/// Keeps lines in memory: for tests and for comparing streams.
package final class CollectedEvents: EventOutput {
    private let storage = Mutex<[String]>([])
    package init() {}
    package func write(line: String) throws { storage.withLock { $0.append(line) } }
    package var lines: [String] { storage.withLock { $0 } }
}
