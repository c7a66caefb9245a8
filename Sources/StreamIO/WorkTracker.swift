/// Counts work that has been handed to a node but not finished, so a simulation driver can wait
/// until the node is idle before advancing virtual time. That wait is what makes a seeded run
/// reproduce the same event stream every time. Real radios run without one.
///
/// In this module, beside `WaiterList`, so that its waiter list is specialised for its count:
/// generic code is not specialised across this package's modules (`package` declarations are
/// not serialised for other modules, `@inlinable` or not), and unspecialised, each `begin` and
/// `end` (once per input of a simulated node) looked up the list's generic metadata.
package final class WorkTracker: Sendable {
    /// The work outstanding; waiters wait for none.
    private let outstanding = WaiterList(0) { $0 == 0 }

    package init() {}

    package func begin(_ count: Int = 1) {
        outstanding.update { $0 += count }
    }

    package func end(_ count: Int = 1) {
        outstanding.update { outstanding in
            outstanding -= count
            precondition(outstanding >= 0, "WorkTracker.end without begin")
        }
    }

    /// Returns once nothing is outstanding.
    package func waitUntilIdle() async {
        await outstanding.wait()
    }
}
