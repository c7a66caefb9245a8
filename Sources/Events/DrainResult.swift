import Glibc
import Synchronization

/// How a sink (or the whole stream) ended up when it was drained.
package struct DrainResult: Sendable {
    /// Lines that were emitted (or refused) but never written: lost to a failed output, or
    /// still waiting when the stop deadline passed.
    package var unwritten: Int
    /// The output's first failure, if it failed.
    package var failure: (any Error)?

    package init(unwritten: Int = 0, failure: (any Error)? = nil) {
        self.unwritten = unwritten
        self.failure = failure
    }
}
