import BLE
import GATTDBus
import Glibc
import Logging
import Synchronization
import Testing

@testable import BLEBlueZ
@testable import GATTServer

/// The D-Bus GATT backend against Debian's bluetoothd (5.66) on the VM rig's real kernel: runs
/// only there (Tests/VMRig/dbus-gatt.sh sets NEARBY_BRIDGE_VM_DBUS), with bluetoothd on both
/// adapters and hci0 advertising connectable. The application registers on hci0; the client is
/// the kernel's own LE ATT socket on hci1, talking to bluetoothd's ATT server, which holds
/// bluetoothd's own services and ours. PDUs from the Core Specification (Vol 3 Part F §3.4).
@Suite(.enabled(if: getenv("NEARBY_BRIDGE_VM_DBUS") != nil))
struct GATTDBusBluetoothdTests {
    @Test func bluetoothdServesTheApplicationOverTheAir() async throws {
        let server = try await BlueZAdapter.readInfo("hci0")
        let client = try await BlueZAdapter.readInfo("hci1")
        let log = EventLog()
        let application = try GATTDBusApplication.start(
            on: .system, adapter: "hci0", database: accessoryDatabase, advertising: [AccessoryGATTService.qorvoService],
            logger: Logger(label: "dbus-gatt-test"), handler: log.record)
        defer { application.stop() }
        for registration in [GATTDBusRegistration.application, .advertisement] {
            let answer = log.wait {
                $0.first {
                    switch $0 {
                    case .registered(registration), .registrationFailed(registration, _, _): true
                    default: false
                    }
                }
            }
            #expect(answer == .registered(registration), "bluetoothd's answer")
            print("VM-DBUS \(registration): \(String(describing: answer))")
        }

        let peer = try SeqpacketClient.connectATT(from: client.address, to: server.address)
        defer { try? peer.fd.close() }
        // Every primary service bluetoothd serves (Read By Group Type, 0x2800), page by page.
        var services: [(start: UInt16, end: UInt16, uuid: [UInt8])] = []
        var next: UInt16 = 1
        while next != 0, let answer = try peer.response(to: [0x10] + le(next) + [0xFF, 0xFF, 0x00, 0x28]), answer[0] == 0x11 {
            let length = Int(answer[1])
            for entry in stride(from: 2, to: answer.count - length + 1, by: length) {
                let start = UInt16(answer[entry]) | UInt16(answer[entry + 1]) << 8
                let end = UInt16(answer[entry + 2]) | UInt16(answer[entry + 3]) << 8
                services.append((start, end, Array(answer[entry + 4..<entry + length])))
                next = end == 0xFFFF ? 0 : end + 1
            }
        }
        print("VM-DBUS services: " + services.map { "\($0.start)-\($0.end) \(GATTUUID(littleEndian: $0.uuid)?.description ?? "?")" }.joined(separator: ", "))
        let ni = try #require(services.first { GATTUUID(littleEndian: $0.uuid) == AccessoryGATTService.qorvoService }, "our NI service")
        #expect(services.contains { GATTUUID(littleEndian: $0.uuid) == AccessoryGATTService.uartService })
        #expect(services.contains { GATTUUID(littleEndian: $0.uuid) == AccessoryGATTService.tokenService })

        // Its characteristics (Read By Type, 0x2803): properties, value handle, UUID.
        var characteristics: [(properties: UInt8, value: UInt16, uuid: GATTUUID?)] = []
        next = ni.start
        while next <= ni.end, let answer = try peer.response(to: [0x08] + le(next) + le(ni.end) + [0x03, 0x28]), answer[0] == 0x09 {
            let length = Int(answer[1])
            for entry in stride(from: 2, to: answer.count - length + 1, by: length) {
                let declaration = UInt16(answer[entry]) | UInt16(answer[entry + 1]) << 8
                let value = UInt16(answer[entry + 3]) | UInt16(answer[entry + 4]) << 8
                characteristics.append((answer[entry + 2], value, GATTUUID(littleEndian: answer[entry + 5..<entry + length])))
                next = declaration + 1
            }
        }
        let rx = try #require(characteristics.first { $0.uuid == AccessoryGATTService.qorvoRX })
        let tx = try #require(characteristics.first { $0.uuid == AccessoryGATTService.qorvoTX })
        #expect(rx.properties == 0x0C, "write + write without response")
        #expect(tx.properties == 0x10, "notify")

        // A Write Request to RX reaches us through WriteValue, naming the writer's device.
        #expect(try peer.response(to: [0x12] + le(rx.value) + [0x0A, 0x01, 0x02]) == [0x13])
        let device = "/org/bluez/hci0/dev_" + client.address.reversed().map { hex($0) }.joined(separator: "_")
        let write = log.wait { $0.first { if case .client(_, .write) = $0 { true } else { false } } }
        #expect(
            write
                == .client(
                    device: device,
                    .write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: accessoryDatabase.characteristic(AccessoryGATTService.qorvoRX)!.valueHandle,
                           value: [0x0A, 0x01, 0x02], withResponse: true)),
            "the handle is ours, not bluetoothd's")

        // Subscribing to TX (its 0x2902, found with Find Information) is StartNotify; our
        // notification arrives as an ATT Handle Value Notification on bluetoothd's handle.
        let information = try #require(try peer.response(to: [0x04] + le(tx.value + 1) + le(tx.value + 1)))
        #expect(information == [0x05, 0x01] + le(tx.value + 1) + [0x02, 0x29], "the CCCD right after TX's value")
        #expect(try peer.response(to: [0x12] + le(tx.value + 1) + [0x01, 0x00]) == [0x13])
        #expect(log.wait { $0.first { if case .client(_, .subscription) = $0 { true } else { false } } }
            == .client(device: nil, .subscription(characteristic: AccessoryGATTService.qorvoTX, .notifications)))
        application.notify(AccessoryGATTService.qorvoTX, value: [0x01, 0x02, 0x03])
        var notification: [UInt8]?
        while notification == nil, let pdu = peer.receive() {
            switch pdu[0] {
            case 0x1B: notification = pdu
            case 0x1D: try peer.send([0x1E])  // bluetoothd's Service Changed indication
            default: break
            }
        }
        #expect(notification == [0x1B] + le(tx.value) + [0x01, 0x02, 0x03])
    }

    private func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private func hex(_ octet: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(octet >> 4)], digits[Int(octet & 0x0F)]])
    }
}

/// What the application reported, for the test to wait on.
private final class EventLog: Sendable {
    private let events = Mutex<[GATTDBusEvent]>([])

    @Sendable func record(_ event: GATTDBusEvent) { events.withLock { $0.append(event) } }

    func wait<T>(_ ready: ([GATTDBusEvent]) -> T?) -> T? {
        polled(1500, every: 10_000) { events.withLock { ready($0) } }
    }
}
