import Synchronization

/// Where a GATT backend hands the node its clients' events, set by `GATTBackend.start(events:)`.
/// A backend's own threads may report before the node starts it: those events are dropped (no
/// phone can have reached a node that has not started).
package final class GATTClientEventSink: Sendable {
    private let handler = Mutex<(@Sendable (GATTClientEvent) -> Void)?>(nil)

    package init() {}

    package func set(_ events: @escaping @Sendable (GATTClientEvent) -> Void) {
        handler.withLock { $0 = events }
    }

    package func send(_ event: GATTClientEvent) {
        handler.withLock { $0 }?(event)
    }
}
