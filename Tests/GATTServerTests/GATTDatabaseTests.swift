import Testing

@testable import GATTServer

/// The layout a real server gives the database (Core Specification Vol 3 Part G §3: service
/// declaration, then per characteristic its declaration, value and descriptors), with every
/// handle and declaration value written out by hand.
@Suite struct GATTDatabaseTests {
    @Test func theAccessoryServicesAreLaidOutInOrder() {
        // (handle, type as on the air, value) for all 17 attributes.
        let expected: [(UInt16, [UInt8], [UInt8])] = [
            (0x0001, octets("00 28"), niServiceLE),
            // Part G §3.3.1: properties, value handle (LE), UUID (LE). SEC: read (0x02).
            (0x0002, octets("03 28"), octets("02 03 00") + niSecureLE),
            (0x0003, niSecureLE, Array("nearby-bridge".utf8)),
            // RX: write without response (0x04) | write (0x08).
            (0x0004, octets("03 28"), octets("0C 05 00") + niRXLE),
            (0x0005, niRXLE, []),
            // TX: notify (0x10), then its client characteristic configuration (0x2902).
            (0x0006, octets("03 28"), octets("10 07 00") + niTXLE),
            (0x0007, niTXLE, []),
            (0x0008, octets("02 29"), octets("00 00")),
            (0x0009, octets("00 28"), uartServiceLE),
            (0x000A, octets("03 28"), octets("0C 0B 00") + uartRXLE),
            (0x000B, uartRXLE, []),
            (0x000C, octets("03 28"), octets("10 0D 00") + uartTXLE),
            (0x000D, uartTXLE, []),
            (0x000E, octets("02 29"), octets("00 00")),
            (0x000F, octets("00 28"), tokenServiceLE),
            // The token: write (0x08) only.
            (0x0010, octets("03 28"), octets("08 11 00") + tokenLE),
            (0x0011, tokenLE, []),
        ]
        let attributes = accessoryDatabase.attributes
        #expect(attributes.count == expected.count)
        for (attribute, (handle, type, value)) in zip(attributes, expected) {
            #expect(attribute.handle == handle)
            #expect(attribute.type.littleEndian == type, "type of handle \(handle)")
            #expect(attribute.value == value, "value of handle \(handle)")
        }
        #expect(accessoryDatabase.services.map { [$0.startHandle, $0.endHandle] } == [[1, 8], [9, 14], [15, 17]])
        let tx = accessoryDatabase.characteristic(AccessoryGATTService.qorvoTX)
        #expect(tx?.declarationHandle == 6 && tx?.valueHandle == 7 && tx?.configurationHandle == 8)
        #expect(accessoryDatabase.characteristic(AccessoryGATTService.tokenCharacteristic)?.definition.maximumLength == 64)
    }

    @Test func whichServicesAreOfferedIsAParameter() {
        let database = AccessoryGATTService.database(offering: [.nordicUART])
        #expect(database.attributes.count == 6)
        #expect(database.attributes[0].value == uartServiceLE)
        #expect(database.characteristic(AccessoryGATTService.qorvoRX) == nil)
        let withName = AccessoryGATTService.database(offering: [.genericAccess(deviceName: "rig"), .nordicUART])
        // Generic Access (0x1800): Device Name (0x2A00) and Appearance (0x2A01), both read.
        #expect(withName.attributes[0].value == octets("00 18"))
        #expect(withName.attributes[1].value == octets("02 03 00 00 2A"))
        #expect(withName.attributes[2].value == Array("rig".utf8))
        #expect(withName.attributes[3].value == octets("02 05 00 01 2A"))
        #expect(withName.attributes[5].value == uartServiceLE)
    }

    /// Core Specification Vol 3 Part B §2.5.1: a 16-bit UUID is the Bluetooth Base UUID with
    /// its value in octets 2-3; both forms name the same attribute type.
    @Test func uuidsCompareAcrossTheirForms() {
        #expect(GATTUUID("00002902-0000-1000-8000-00805F9B34FB") == GATTUUID(0x2902))
        #expect(GATTUUID(0x2902).littleEndian == [0x02, 0x29])
        #expect(GATTUUID(littleEndian: octets("FB 34 9B 5F 80 00 00 80 00 10 00 00 03 28 00 00")) == .characteristic)
        #expect(GATTUUID("2e939af2-6a61-11ed-a1eb-0242ac120002")?.littleEndian == niTXLE)
        #expect(AccessoryGATTService.qorvoTX.description == "2E939AF2-6A61-11ED-A1EB-0242AC120002")
        #expect(GATTUUID(0x2A00).description == "2A00")
        for bad in ["", "2E939AF2", "2E939AF2-6A61-11ED-A1EB-0242AC12000", "2E939AF26A61-11ED-A1EB-0242AC1200022", "ZZZZ"] {
            #expect(GATTUUID(bad) == nil, "\(bad)")
        }
        #expect(GATTUUID(littleEndian: [1, 2, 3]) == nil)
    }

    /// BlueZ's GattCharacteristic1 flags for the D-Bus backend (doc/org.bluez.GattCharacteristic.rst).
    @Test func propertiesMapToBlueZFlags() {
        #expect(GATTCharacteristicProperties([.write, .writeWithoutResponse]).bluezFlags() == ["write-without-response", "write"])
        #expect(GATTCharacteristicProperties.read.bluezFlags(encryptRead: true) == ["encrypt-read"])
        #expect(GATTCharacteristicProperties.notify.bluezFlags() == ["notify"])
    }
}
