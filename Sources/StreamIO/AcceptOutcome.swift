import SystemPackage

/// What one `accept(2)` gave.
package enum AcceptOutcome<Connection> {
    case accepted(Connection)
    case failed(Errno)
    /// The listener was closed or shut down: the loop ends.
    case stopped
}
