import GATTServer

/// A GATT database as the D-Bus objects BlueZ's GattManager1 reads when an application registers
/// (doc/org.bluez.GattManager.rst): under `root` (which carries the ObjectManager), one object per
/// service (`root/serviceN`, org.bluez.GattService1) and per characteristic
/// (`root/serviceN/charM`, org.bluez.GattCharacteristic1). Pure: the bus backend serves it.
///
/// bluetoothd serves the Generic Access and Generic Attribute services itself and refuses a
/// second one, so those are left out. A characteristic's 0x2902 descriptor is not an object
/// either: bluetoothd adds it for every characteristic that notifies or indicates.
package struct GATTObjectTree: Hashable, Sendable {
    package static let serviceInterface = "org.bluez.GattService1"
    package static let characteristicInterface = "org.bluez.GattCharacteristic1"

    /// One exported object: its path, its one BlueZ interface and that interface's properties.
    package struct Object: Hashable, Sendable {
        package let path: String
        package let interface: String
        package let properties: [Property]
    }

    package struct Property: Hashable, Sendable {
        package let name: String
        package let value: BusValue
    }

    package let root: String
    package let objects: [Object]
    /// The characteristic (an index into the database's `characteristics`) at each path.
    private let characteristicAtPath: [String: Int]
    private let pathOfCharacteristic: [Int: String]

    package init(_ database: GATTDatabase, root: String) {
        var objects: [Object] = []
        var characteristicAtPath: [String: Int] = [:]
        var pathOfCharacteristic: [Int: String] = [:]
        let served = database.services.filter { !Self.servedByBluetoothd.contains($0.definition.uuid) }
        for (serviceNumber, service) in served.enumerated() {
            let servicePath = "\(root)/service\(serviceNumber)"
            objects.append(
                Object(
                    path: servicePath, interface: Self.serviceInterface,
                    properties: [
                        Property(name: "UUID", value: .string(Self.text(service.definition.uuid))),
                        Property(name: "Primary", value: .bool(true)),
                    ]))
            let indices = database.characteristics.indices.filter {
                database.characteristics[$0].valueHandle > service.startHandle && database.characteristics[$0].valueHandle <= service.endHandle
            }
            for (characteristicNumber, index) in indices.enumerated() {
                let characteristic = database.characteristics[index]
                let path = "\(servicePath)/char\(characteristicNumber)"
                characteristicAtPath[path] = index
                pathOfCharacteristic[index] = path
                let flags = characteristic.definition.properties.bluezFlags(encryptRead: characteristic.definition.readRequiresEncryption)
                objects.append(
                    Object(
                        path: path, interface: Self.characteristicInterface,
                        properties: [
                            Property(name: "UUID", value: .string(Self.text(characteristic.uuid))),
                            Property(name: "Service", value: .objectPath(servicePath)),
                            Property(name: "Flags", value: .strings(flags)),
                        ]))
            }
        }
        self.root = root
        self.objects = objects
        self.characteristicAtPath = characteristicAtPath
        self.pathOfCharacteristic = pathOfCharacteristic
    }

    /// The characteristic exported at `path` (an index into the database's `characteristics`).
    package func characteristic(at path: String) -> Int? { characteristicAtPath[path] }

    /// Where the characteristic with that index is exported; nil for one left out.
    package func path(ofCharacteristic index: Int) -> String? { pathOfCharacteristic[index] }

    package func object(at path: String) -> Object? { objects.first { $0.path == path } }

    /// The services bluetoothd always serves itself (Generic Access, Generic Attribute).
    package static let servedByBluetoothd: Set<GATTUUID> = [.genericAccess, GATTUUID(0x1801)]

    /// A UUID as BlueZ writes one: 128 bits, lowercase, with dashes (`0000180a-0000-1000-8000-00805f9b34fb`).
    package static func text(_ uuid: GATTUUID) -> String {
        var text = ""
        for (index, octet) in uuid.octets.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            text += String(octet >> 4, radix: 16) + String(octet & 0x0F, radix: 16)
        }
        return text
    }
}
