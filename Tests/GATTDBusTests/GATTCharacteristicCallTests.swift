@testable import GATTDBus
import GATTServer
import Testing

/// ReadValue and WriteValue checks, with the error names BlueZ's GATT API lists
/// (doc/org.bluez.GattCharacteristic.rst).
@Suite struct GATTCharacteristicCallTests {
    let readable = GATTCharacteristic(GATTUUID(0x2A00), properties: .read, value: Array("rig-a".utf8))
    let writable = GATTCharacteristic(GATTUUID(0x2A01), properties: [.write, .writeWithoutResponse], maximumLength: 4)
    let commandOnly = GATTCharacteristic(GATTUUID(0x2A02), properties: .writeWithoutResponse)

    func refusal(_ body: () throws(GATTDBusCallError) -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.name
        }
    }

    @Test func readsFromTheOffset() throws {
        #expect(try GATTCharacteristicCall.read(readable, options: [:]) == Array("rig-a".utf8))
        #expect(try GATTCharacteristicCall.read(readable, options: ["offset": .uint16(4)]) == Array("a".utf8))
        #expect(try GATTCharacteristicCall.read(readable, options: ["offset": .uint16(5)]) == [])
        #expect(refusal { () throws(GATTDBusCallError) in try GATTCharacteristicCall.read(readable, options: ["offset": .uint16(6)]) } == "org.bluez.Error.InvalidOffset")
        #expect(refusal { () throws(GATTDBusCallError) in try GATTCharacteristicCall.read(writable, options: [:]) } == "org.bluez.Error.NotPermitted")
    }

    @Test func writesWithTheirTypeAndLength() throws {
        #expect(try GATTCharacteristicCall.write(writable, value: [1, 2, 3, 4], options: ["type": .string("request")]) == true)
        #expect(try GATTCharacteristicCall.write(writable, value: [1], options: ["type": .string("command")]) == false)
        #expect(try GATTCharacteristicCall.write(writable, value: [1], options: [:]) == true)
        #expect(try GATTCharacteristicCall.write(commandOnly, value: [1], options: [:]) == false)
        #expect(refusal { () throws(GATTDBusCallError) in try GATTCharacteristicCall.write(commandOnly, value: [1], options: ["type": .string("request")]) }
            == "org.bluez.Error.NotPermitted")
        #expect(refusal { () throws(GATTDBusCallError) in try GATTCharacteristicCall.write(readable, value: [1], options: [:]) } == "org.bluez.Error.NotPermitted")
        #expect(refusal { () throws(GATTDBusCallError) in try GATTCharacteristicCall.write(writable, value: [1, 2, 3, 4, 5], options: [:]) }
            == "org.bluez.Error.InvalidValueLength")
        #expect(refusal { () throws(GATTDBusCallError) in try GATTCharacteristicCall.write(writable, value: [1], options: ["offset": .uint16(1)]) }
            == "org.bluez.Error.InvalidOffset")
    }
}
