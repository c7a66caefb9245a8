import GATTServer

/// The advertisement object bluetoothd reads when one is registered with LEAdvertisingManager1
/// (doc/org.bluez.LEAdvertisement.rst): a connectable (`peripheral`) advertisement listing the
/// services a phone's app scans for. bluetoothd builds the advertising data from it (flags, the
/// UUIDs in their shortest form) and rotates it with the adapter's other advertisements. Pure.
package enum LEAdvertisementObject {
    package static let interface = "org.bluez.LEAdvertisement1"

    package static func object(at path: String, serviceUUIDs: [GATTUUID]) -> GATTObjectTree.Object {
        GATTObjectTree.Object(
            path: path, interface: interface,
            properties: [
                GATTObjectTree.Property(name: "Type", value: .string("peripheral")),
                GATTObjectTree.Property(name: "ServiceUUIDs", value: .strings(serviceUUIDs.map(GATTObjectTree.text))),
            ])
    }
}
