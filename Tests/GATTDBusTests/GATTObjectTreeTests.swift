import GATTDBus
import GATTServer
import Testing

/// The objects a rig's GATT database becomes for BlueZ's GattManager1. Expected values are
/// written out from BlueZ's documentation (doc/org.bluez.GattService.rst,
/// org.bluez.GattCharacteristic.rst: 128-bit UUID strings, the `Flags` names) and from the
/// service UUIDs Qorvo's and Nordic's apps use (issue 33), not taken from the code.
@Suite struct GATTObjectTreeTests {
    static let database = AccessoryGATTService.database(offering: [
        .genericAccess(deviceName: "rig-a"), .qorvoNearbyInteraction, .nordicUART, .attendeeToken,
    ])

    @Test func everyServiceAndCharacteristicButGenericAccessIsAnObject() {
        let tree = GATTObjectTree(Self.database, root: "/r")
        let expected: [(String, String, [String: BusValue])] = [
            ("/r/service0", "org.bluez.GattService1", ["UUID": .string("2e938fd0-6a61-11ed-a1eb-0242ac120002"), "Primary": .bool(true)]),
            ("/r/service0/char0", "org.bluez.GattCharacteristic1",
             ["UUID": .string("2e93941c-6a61-11ed-a1eb-0242ac120002"), "Service": .objectPath("/r/service0"), "Flags": .strings(["encrypt-read"])]),
            ("/r/service0/char1", "org.bluez.GattCharacteristic1",
             ["UUID": .string("2e93998a-6a61-11ed-a1eb-0242ac120002"), "Service": .objectPath("/r/service0"),
              "Flags": .strings(["write-without-response", "write"])]),
            ("/r/service0/char2", "org.bluez.GattCharacteristic1",
             ["UUID": .string("2e939af2-6a61-11ed-a1eb-0242ac120002"), "Service": .objectPath("/r/service0"), "Flags": .strings(["notify"])]),
            ("/r/service1", "org.bluez.GattService1", ["UUID": .string("6e400001-b5a3-f393-e0a9-e50e24dcca9e"), "Primary": .bool(true)]),
            ("/r/service1/char0", "org.bluez.GattCharacteristic1",
             ["UUID": .string("6e400002-b5a3-f393-e0a9-e50e24dcca9e"), "Service": .objectPath("/r/service1"),
              "Flags": .strings(["write-without-response", "write"])]),
            ("/r/service1/char1", "org.bluez.GattCharacteristic1",
             ["UUID": .string("6e400003-b5a3-f393-e0a9-e50e24dcca9e"), "Service": .objectPath("/r/service1"), "Flags": .strings(["notify"])]),
            ("/r/service2", "org.bluez.GattService1", ["UUID": .string("2ed41668-154d-4053-a64f-10bf69a2a46e"), "Primary": .bool(true)]),
            ("/r/service2/char0", "org.bluez.GattCharacteristic1",
             ["UUID": .string("de2765d7-cff1-4ef1-a826-3165f492577d"), "Service": .objectPath("/r/service2"), "Flags": .strings(["write"])]),
        ]
        #expect(tree.objects.map(\.path) == expected.map { $0.0 })
        for (object, (path, interface, properties)) in zip(tree.objects, expected) {
            #expect(object.interface == interface, "\(path)")
            #expect([String: BusValue](uniqueKeysWithValues: object.properties.map { ($0.name, $0.value) }) == properties, "\(path)")
        }
    }

    @Test func pathsLeadBackToTheDatabasesCharacteristics() {
        let tree = GATTObjectTree(Self.database, root: "/r")
        // The database's characteristics: device name, appearance (GAP, not exported), then SEC, RX, TX, ...
        #expect(Self.database.characteristics[0].uuid == GATTUUID.deviceName)
        #expect(tree.path(ofCharacteristic: 0) == nil)
        #expect(tree.characteristic(at: "/r/service0/char1").map { Self.database.characteristics[$0].uuid } == AccessoryGATTService.qorvoRX)
        #expect(tree.characteristic(at: "/r/service2/char0").map { Self.database.characteristics[$0].uuid } == AccessoryGATTService.tokenCharacteristic)
        #expect(tree.characteristic(at: "/r/service0") == nil)
        #expect(tree.characteristic(at: "/r/service9/char0") == nil)
    }

    /// doc/org.bluez.LEAdvertisement.rst: a connectable advertisement is Type "peripheral"; UUIDs
    /// are given in 128-bit form (bluetoothd shortens them in the advertising data).
    @Test func theAdvertisementIsAPeripheralNamingTheServices() {
        let object = LEAdvertisementObject.object(at: "/a", serviceUUIDs: [AccessoryGATTService.qorvoService, GATTUUID(0x180A)])
        #expect(object.interface == "org.bluez.LEAdvertisement1")
        #expect(object.properties.map(\.name) == ["Type", "ServiceUUIDs"])
        #expect(object.properties.map(\.value) == [
            .string("peripheral"), .strings(["2e938fd0-6a61-11ed-a1eb-0242ac120002", "0000180a-0000-1000-8000-00805f9b34fb"]),
        ])
    }

    @Test func sixteenBitUUIDsAreWrittenInFullLowercase() {
        #expect(GATTObjectTree.text(GATTUUID(0x180A)) == "0000180a-0000-1000-8000-00805f9b34fb")
        #expect(GATTObjectTree.text(GATTUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!) == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
    }
}
