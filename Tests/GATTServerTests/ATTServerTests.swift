import Testing

@testable import GATTServer

/// The ATT server against PDUs written by hand from the Core Specification (Vol 3 Part F §3.4
/// for each PDU's layout, Part G §4 for the procedures that send them). Handles are the
/// accessory database's (GATTDatabaseTests); ATT_MTU is 23 unless a test exchanges it.
@Suite struct ATTServerTests {
    private func server(mtu clientMTU: UInt16? = nil) -> ATTServer {
        var server = ATTServer(database: accessoryDatabase)
        if let clientMTU { _ = server.handle([0x02, UInt8(clientMTU & 0xFF), UInt8(clientMTU >> 8)]) }
        return server
    }

    /// §3.4.2.1-2: the response carries the Server Rx MTU; ATT_MTU is the smaller of the two,
    /// and a Client Rx MTU below 23 leaves it at 23.
    @Test func exchangeMTU() {
        var server = ATTServer(database: accessoryDatabase, serverMTU: 247)
        #expect(server.handle(octets("02 00 02")) == [.send(octets("03 F7 00"))])
        #expect(server.mtu == 247)
        var small = ATTServer(database: accessoryDatabase)
        #expect(small.handle(octets("02 0A 00")) == [.send(octets("03 05 02"))])
        #expect(small.mtu == 23)
        var once = ATTServer(database: accessoryDatabase)
        _ = once.handle(octets("02 40 00"))
        _ = once.handle(octets("02 00 01"))
        #expect(once.mtu == 64, "a second exchange changes nothing")
        #expect(once.handle(octets("02 40")) == [.send(octets("01 02 00 00 04"))], "short: Invalid PDU")
    }

    /// §3.4.4.9-10 and Part G §4.4.1: Read By Group Type 0x2800 pages through the services;
    /// at ATT_MTU 23 one 128-bit service (4 + 16 octets) fits per response.
    @Test func discoverAllPrimaryServices() {
        var server = server()
        #expect(server.handle(octets("10 01 00 FF FF 00 28")) == [.send(octets("11 14 01 00 08 00") + niServiceLE)])
        #expect(server.handle(octets("10 09 00 FF FF 00 28")) == [.send(octets("11 14 09 00 0E 00") + uartServiceLE)])
        #expect(server.handle(octets("10 0F 00 FF FF 00 28")) == [.send(octets("11 14 0F 00 11 00") + tokenServiceLE)])
        // §3.4.4.10: no more: Attribute Not Found, the request's starting handle in error.
        #expect(server.handle(octets("10 12 00 FF FF 00 28")) == [.send(octets("01 10 12 00 0A"))])
        // The 128-bit form of 0x2800 is the same type (Vol 3 Part B §2.5.1).
        #expect(
            server.handle(octets("10 09 00 FF FF FB 34 9B 5F 80 00 00 80 00 10 00 00 00 28 00 00"))
                == [.send(octets("11 14 09 00 0E 00") + uartServiceLE)])
        // With a larger MTU all three fit (2 + 3 × 20 octets).
        var large = self.server(mtu: 100)
        #expect(
            large.handle(octets("10 01 00 FF FF 00 28"))
                == [.send(octets("11 14 01 00 08 00") + niServiceLE + octets("09 00 0E 00") + uartServiceLE + octets("0F 00 11 00") + tokenServiceLE)])
    }

    /// §3.4.4.9: only grouping types (Part G §2.5.3) may be asked for.
    @Test func readByGroupTypeRefusesOtherTypes() {
        var server = server()
        #expect(server.handle(octets("10 01 00 FF FF 03 28")) == [.send(octets("01 10 01 00 10"))])
        // A secondary service is a grouping type; there are none.
        #expect(server.handle(octets("10 01 00 FF FF 01 28")) == [.send(octets("01 10 01 00 0A"))])
        // §3.4.4.9: starting handle 0 or above the ending handle: Invalid Handle.
        #expect(server.handle(octets("10 00 00 FF FF 00 28")) == [.send(octets("01 10 00 00 01"))])
        #expect(server.handle(octets("10 05 00 04 00 00 28")) == [.send(octets("01 10 05 00 01"))])
        // A type of 3 octets is no UUID: Invalid PDU.
        #expect(server.handle(octets("10 01 00 FF FF 00 28 00")) == [.send(octets("01 10 00 00 04"))])
    }

    /// §3.4.3.3-4 and Part G §4.4.2: Discover Primary Service by Service UUID.
    @Test func discoverPrimaryServiceByUUID() {
        var server = server()
        #expect(server.handle(octets("06 01 00 FF FF 00 28") + uartServiceLE) == [.send(octets("07 09 00 0E 00"))])
        #expect(server.handle(octets("06 0A 00 FF FF 00 28") + uartServiceLE) == [.send(octets("01 06 0A 00 0A"))])
        #expect(server.handle(octets("06 01 00 FF FF 00 28 0F 18")) == [.send(octets("01 06 01 00 0A"))])
        #expect(server.handle(octets("06 01 00 FF FF 00")) == [.send(octets("01 06 00 00 04"))])
    }

    /// §3.4.4.1-2 and Part G §4.6.1: Discover All Characteristics of a Service reads 0x2803; at
    /// ATT_MTU 23 one declaration (2 + 19 octets) fits per response.
    @Test func discoverCharacteristics() {
        var server = server()
        #expect(server.handle(octets("08 01 00 08 00 03 28")) == [.send(octets("09 15 02 00 02 03 00") + niSecureLE)])
        #expect(server.handle(octets("08 03 00 08 00 03 28")) == [.send(octets("09 15 04 00 0C 05 00") + niRXLE)])
        #expect(server.handle(octets("08 05 00 08 00 03 28")) == [.send(octets("09 15 06 00 10 07 00") + niTXLE)])
        #expect(server.handle(octets("08 07 00 08 00 03 28")) == [.send(octets("01 08 07 00 0A"))])
        var large = self.server(mtu: 80)
        #expect(
            large.handle(octets("08 09 00 0E 00 03 28"))
                == [.send(octets("09 15 0A 00 0C 0B 00") + uartRXLE + octets("0C 00 10 0D 00") + uartTXLE)])
    }

    /// §3.4.4.1: an attribute that may not be read is the error if it comes first, and ends
    /// the list otherwise (Read Using Characteristic UUID, Part G §4.8.2).
    @Test func readByTypeStopsAtAnUnreadableAttribute() {
        var server = server()
        #expect(server.handle(octets("08 01 00 FF FF") + niRXLE) == [.send(octets("01 08 05 00 02"))])
        #expect(server.handle(octets("08 01 00 FF FF") + niSecureLE) == [.send(octets("01 08 03 00 0F"))])
        server.linkEncrypted = true
        #expect(server.handle(octets("08 01 00 FF FF") + niSecureLE) == [.send(octets("09 0F 03 00") + Array("nearby-bridge".utf8))])
        #expect(server.handle(octets("08 01 00 FF FF 02 29")) == [.send(octets("09 04 08 00 00 00 0E 00 00 00"))])
    }

    /// §3.4.3.1-2 and Part G §4.7.1: Find Information, one format per response.
    @Test func discoverDescriptors() {
        var server = server()
        #expect(server.handle(octets("04 08 00 08 00")) == [.send(octets("05 01 08 00 02 29"))])
        // The TX value (128-bit type) comes first: format 2, and the 16-bit 0x2902 waits.
        #expect(server.handle(octets("04 07 00 08 00")) == [.send(octets("05 02 07 00") + niTXLE)])
        #expect(server.handle(octets("04 01 00 02 00")) == [.send(octets("05 01 01 00 00 28 02 00 03 28"))])
        #expect(server.handle(octets("04 12 00 FF FF")) == [.send(octets("01 04 12 00 0A"))])
        #expect(server.handle(octets("04 00 00 FF FF")) == [.send(octets("01 04 00 00 01"))])
        #expect(server.handle(octets("04 01 00 FF")) == [.send(octets("01 04 00 00 04"))])
    }

    /// §3.4.4.3-4: Read Request; §3.4.1.1's errors for a missing or unreadable attribute.
    @Test func read() {
        var server = server()
        #expect(server.handle(octets("0A 02 00")) == [.send(octets("0B 02 03 00") + niSecureLE)])
        #expect(server.handle(octets("0A 05 00")) == [.send(octets("01 0A 05 00 02"))])
        #expect(server.handle(octets("0A 03 00")) == [.send(octets("01 0A 03 00 0F"))])
        #expect(server.handle(octets("0A 12 00")) == [.send(octets("01 0A 12 00 01"))])
        #expect(server.handle(octets("0A 00 00")) == [.send(octets("01 0A 00 00 01"))])
        #expect(server.handle(octets("0A 01")) == [.send(octets("01 0A 00 00 04"))])
        server.linkEncrypted = true
        #expect(server.handle(octets("0A 03 00")) == [.send(octets("0B") + Array("nearby-bridge".utf8))])
    }

    /// §3.4.4.5-6: Read Blob from an offset; Invalid Offset past the end; Attribute Not Long
    /// for a fixed-length attribute that a Read returns whole.
    @Test func readBlob() {
        var server = server()
        server.linkEncrypted = true
        #expect(server.handle(octets("0C 03 00 07 00")) == [.send(octets("0D") + Array("bridge".utf8))])
        #expect(server.handle(octets("0C 03 00 0D 00")) == [.send(octets("0D"))])
        #expect(server.handle(octets("0C 03 00 0E 00")) == [.send(octets("01 0C 03 00 07"))])
        #expect(server.handle(octets("0C 08 00 00 00")) == [.send(octets("01 0C 08 00 0B"))])
        #expect(server.handle(octets("0C 05 00 00 00")) == [.send(octets("01 0C 05 00 02"))])
        #expect(server.handle(octets("0C 20 00 00 00")) == [.send(octets("01 0C 20 00 01"))])
        #expect(server.handle(octets("0C 03 00 00")) == [.send(octets("01 0C 00 00 04"))])
    }

    /// §3.4.5.1-2: a Write Request to RX is answered and handed to the bridge.
    @Test func writeRequest() {
        var server = server()
        #expect(
            server.handle(octets("12 05 00 0A"))
                == [.send(octets("13")), .write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: 5, value: [0x0A], withResponse: true)])
        #expect(
            server.handle(octets("12 0B 00 0C"))
                == [.send(octets("13")), .write(characteristic: AccessoryGATTService.uartRX, valueHandle: 11, value: [0x0C], withResponse: true)])
        // Not writable: a notify-only value, a declaration; no attribute at 0x0020.
        #expect(server.handle(octets("12 07 00 01")) == [.send(octets("01 12 07 00 03"))])
        #expect(server.handle(octets("12 06 00 01")) == [.send(octets("01 12 06 00 03"))])
        #expect(server.handle(octets("12 20 00 01")) == [.send(octets("01 12 20 00 01"))])
        #expect(server.handle(octets("12 05")) == [.send(octets("01 12 00 00 04"))])
    }

    /// The attendee token takes up to 64 octets; a longer write is Invalid Attribute Value
    /// Length (§3.4.1.1) and reaches nobody.
    @Test func theTokenIsAtMost64Octets() {
        var server = server(mtu: 100)
        let token = [UInt8](repeating: 0x5A, count: 64)
        #expect(
            server.handle(octets("12 11 00") + token)
                == [.send(octets("13")), .write(characteristic: AccessoryGATTService.tokenCharacteristic, valueHandle: 17, value: token, withResponse: true)])
        #expect(server.handle(octets("12 11 00") + token + [0x5A]) == [.send(octets("01 12 11 00 0D"))])
        // Write Request only (Write Without Response is not among its properties): a command is dropped.
        #expect(server.handle(octets("52 11 00 01")) == [])
    }

    /// §3.4.5.3: a Write Command is never answered; a refused one is dropped.
    @Test func writeCommand() {
        var server = server()
        #expect(
            server.handle(octets("52 05 00 0B 01 02"))
                == [.write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: 5, value: [0x0B, 0x01, 0x02], withResponse: false)])
        #expect(server.handle(octets("52 07 00 01")) == [])
        #expect(server.handle(octets("52 08 00 01 00")) == [])
        #expect(server.handle(octets("52 99 00 01")) == [])
        #expect(server.handle(octets("52 05")) == [])
    }

    /// Part G §3.3.3.3 and §4.12.3: a 0x2902 write of two octets, only the bits the
    /// characteristic's properties allow; reads back per connection.
    @Test func clientCharacteristicConfiguration() {
        var server = server()
        #expect(
            server.handle(octets("12 08 00 01 00"))
                == [.send(octets("13")), .subscription(characteristic: AccessoryGATTService.qorvoTX, .notifications)])
        #expect(server.configuration(of: AccessoryGATTService.qorvoTX) == .notifications)
        #expect(server.handle(octets("0A 08 00")) == [.send(octets("0B 01 00"))])
        #expect(server.handle(octets("12 08 00 01 00")) == [.send(octets("13"))], "no change, no event")
        // TX does not indicate: Value Not Allowed; one octet: Invalid Attribute Value Length.
        #expect(server.handle(octets("12 08 00 02 00")) == [.send(octets("01 12 08 00 13"))])
        #expect(server.handle(octets("12 08 00 01")) == [.send(octets("01 12 08 00 0D"))])
        #expect(
            server.handle(octets("12 08 00 00 00"))
                == [.send(octets("13")), .subscription(characteristic: AccessoryGATTService.qorvoTX, [])])
        #expect(ATTServer(database: accessoryDatabase).configuration(of: AccessoryGATTService.qorvoTX) == [])
    }

    /// §3.4.7.1: a notification carries the value handle and at most ATT_MTU − 3 octets, and
    /// goes only to a client that wrote 0x0001 to the 0x2902 descriptor.
    @Test func notifications() throws {
        var server = server()
        let tx = AccessoryGATTService.qorvoTX
        #expect(throws: ATTNotificationError.notSubscribed(tx)) { try server.notification(tx, value: [0x02]) }
        _ = server.handle(octets("12 08 00 01 00"))
        #expect(try server.notification(tx, value: [0x02]) == octets("1B 07 00 02"))
        let twenty = [UInt8](repeating: 1, count: 20)
        #expect(try server.notification(tx, value: twenty) == octets("1B 07 00") + twenty)
        #expect(throws: ATTNotificationError.tooLong(tx, length: 21, maximum: 20)) { try server.notification(tx, value: twenty + [1]) }
        _ = server.handle(octets("02 B9 00"))
        #expect(try server.notification(tx, value: twenty + [1]) == octets("1B 07 00") + twenty + [1])
        #expect(throws: ATTNotificationError.notPermitted(AccessoryGATTService.qorvoRX)) {
            try server.notification(AccessoryGATTService.qorvoRX, value: [1])
        }
        #expect(throws: ATTNotificationError.unknownCharacteristic(GATTUUID(0x2A00))) { try server.notification(GATTUUID(0x2A00), value: [1]) }
        // The UART's TX has its own subscription.
        #expect(throws: ATTNotificationError.notSubscribed(AccessoryGATTService.uartTX)) {
            try server.notification(AccessoryGATTService.uartTX, value: [1])
        }
    }

    /// §3.4.7.2-3: one indication at a time, until the client's confirmation (0x1E).
    @Test func indications() throws {
        let uuid = GATTUUID(0x2A05)
        let database = GATTDatabase([GATTService(GATTUUID(0x1801), characteristics: [GATTCharacteristic(uuid, properties: .indicate)])])
        var server = ATTServer(database: database)
        // Handles: 1 service, 2 declaration, 3 value, 4 0x2902.
        #expect(database.attributes[1].value == octets("20 03 00 05 2A"))
        #expect(server.handle(octets("12 04 00 01 00")) == [.send(octets("01 12 04 00 13"))])
        #expect(server.handle(octets("12 04 00 02 00")) == [.send(octets("13")), .subscription(characteristic: uuid, .indications)])
        #expect(try server.indication(uuid, value: [1, 0, 0xFF, 0xFF]) == octets("1D 03 00 01 00 FF FF"))
        #expect(throws: ATTNotificationError.indicationPending(uuid)) { try server.indication(uuid, value: [1]) }
        #expect(server.handle(octets("1E")) == [.indicationConfirmed(characteristic: uuid)])
        #expect(server.handle(octets("1E")) == [], "a confirmation without an indication is ignored")
        #expect(try server.indication(uuid, value: [2]) == octets("1D 03 00 02"))
    }

    /// §3.3 and §3.3.1: a request the server does not serve gets Request Not Supported with
    /// handle 0; a command, a response or a notification from the client gets nothing.
    @Test func unsupportedAndUnexpectedPDUs() {
        var server = server()
        for request: UInt8 in [0x0E, 0x16, 0x18, 0x20, 0x30, 0x3F, 0x80, 0xBF] {
            #expect(server.handle([request, 0x01, 0x00]) == [.send([0x01, request, 0x00, 0x00, 0x06])], "opcode \(request)")
        }
        for ignored: UInt8 in [0x40, 0x7F, 0xD2, 0xFF, 0x01, 0x03, 0x0B, 0x13, 0x1B, 0x1D] {
            #expect(server.handle([ignored, 0x01, 0x00, 0x00]) == [], "opcode \(ignored)")
        }
        #expect(server.handle([]) == [])
        // Longer than ATT_MTU (23): Invalid PDU.
        #expect(server.handle(octets("12 05 00") + [UInt8](repeating: 0, count: 21)) == [.send(octets("01 12 00 00 04"))])
    }
}
