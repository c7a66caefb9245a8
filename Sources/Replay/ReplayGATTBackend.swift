import GATTServer

/// Plays a rig's GATT backend: the phones' recorded writes, subscriptions and closes are
/// delivered by the driver; what the node notifies goes nowhere.
final class ReplayGATTBackend: GATTBackend {
    private let sink = GATTClientEventSink()

    func start(events: @escaping @Sendable (GATTClientEvent) -> Void) { sink.set(events) }
    func deliver(_ event: GATTClientEvent) { sink.send(event) }
    func notify(_ client: GATTClient, characteristic: GATTUUID, value: [UInt8]) {}
    func stop() {}
}
