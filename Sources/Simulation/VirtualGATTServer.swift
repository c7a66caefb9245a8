import GATTServer

/// A rig's GATT backend in the virtual world: what its node notifies goes to the phone over the
/// `GATTAir`, as the kernel ATT backend or bluetoothd would send it.
package final class VirtualGATTServer: GATTBackend {
    private let air: GATTAir
    private let rig: Int

    init(air: GATTAir, rig: Int) {
        self.air = air
        self.rig = rig
    }

    package func notify(_ client: GATTClient, characteristic: GATTUUID, value: [UInt8]) {
        air.notify(from: rig, client, characteristic: characteristic, value: value)
    }

    package func stop() {
        air.stopServing(rig: rig)
    }
}
