import GATTServer

/// A rig's GATT backend in the virtual world: what its node notifies goes to the phone over the
/// `GATTAir`, as the kernel ATT backend or bluetoothd would send it, and what phones did comes to
/// the node when the driver flushes it in the rig's turn.
package final class VirtualGATTServer: GATTBackend {
    private let air: GATTAir
    private let rig: Int
    private let sink = GATTClientEventSink()

    init(air: GATTAir, rig: Int) {
        self.air = air
        self.rig = rig
    }

    package func start(events: @escaping @Sendable (GATTClientEvent) -> Void) {
        sink.set(events)
    }

    /// Hands the node what its clients did since its last turn; false if they did nothing.
    func flush() -> Bool {
        let events = air.take(rig: rig)
        events.forEach(sink.send)
        return !events.isEmpty
    }

    package func notify(_ client: GATTClient, characteristic: GATTUUID, value: [UInt8]) {
        air.notify(from: rig, client, characteristic: characteristic, value: value)
    }

    package func stop() {
        air.stopServing(rig: rig)
    }
}
