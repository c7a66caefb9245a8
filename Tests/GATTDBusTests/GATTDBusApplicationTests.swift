import Foundation
import GATTDBus
import GATTServer
import Logging
import Synchronization
import Testing

/// The application on a private dbus-daemon, driven by the reference clients a person would use
/// (systemd's busctl, GLib's gdbus, dbus-monitor) the way bluetoothd drives it: GetManagedObjects
/// on the root, ReadValue/WriteValue with bluetoothd's options, StartNotify, and PropertiesChanged
/// for notifications (doc/org.bluez.GattManager.rst, org.bluez.GattCharacteristic.rst).
@Suite(.serialized) struct GATTDBusApplicationTests {
    static let database = GATTObjectTreeTests.database
    static let root = "/org/nearbybridge/gatt"

    final class Events: Sendable {
        private let events = Mutex<[GATTDBusEvent]>([])
        func append(_ event: GATTDBusEvent) { events.withLock { $0.append(event) } }
        var all: [GATTDBusEvent] { events.withLock { $0 } }

        /// Waits (up to 10 s) until an event satisfies `match`, and returns it.
        func first(where match: (GATTDBusEvent) -> Bool) -> GATTDBusEvent? {
            for _ in 0..<1000 {
                if let event = all.first(where: match) { return event }
                usleep(10_000)
            }
            return nil
        }
    }

    func start(_ bus: PrivateBus, adapter: String? = nil, advertising: [GATTUUID] = []) throws -> (GATTDBusApplication, Events) {
        let events = Events()
        let application = try GATTDBusApplication.start(
            on: .address(bus.address), adapter: adapter, database: Self.database, root: Self.root, advertising: advertising,
            logger: Logger(label: "test"), handler: { events.append($0) })
        return (application, events)
    }

    @Test func getManagedObjectsListsTheServicesAndCharacteristics() throws {
        let bus = try PrivateBus()
        let (application, _) = try start(bus)
        defer { application.stop() }
        let answer = try bus.busctl(["call", application.uniqueName, Self.root, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"])
        #expect(answer.status == 0, "\(answer.error)")
        let reply = try #require(answer.json as? [String: Any])
        #expect(reply["type"] as? String == "a{oa{sa{sv}}}")
        let objects = try #require((reply["data"] as? [Any])?.first as? [String: [String: [String: [String: Any]]]])
        #expect(Set(objects.keys) == [
            "\(Self.root)/service0", "\(Self.root)/service0/char0", "\(Self.root)/service0/char1", "\(Self.root)/service0/char2",
            "\(Self.root)/service1", "\(Self.root)/service1/char0", "\(Self.root)/service1/char1",
            "\(Self.root)/service2", "\(Self.root)/service2/char0",
        ])
        let tx = try #require(objects["\(Self.root)/service0/char2"]?["org.bluez.GattCharacteristic1"])
        #expect(tx["UUID"]?["type"] as? String == "s")
        #expect(tx["UUID"]?["data"] as? String == "2e939af2-6a61-11ed-a1eb-0242ac120002")
        #expect(tx["Service"]?["type"] as? String == "o")
        #expect(tx["Service"]?["data"] as? String == "\(Self.root)/service0")
        #expect(tx["Flags"]?["type"] as? String == "as")
        #expect(tx["Flags"]?["data"] as? [String] == ["notify"])
        let service = try #require(objects["\(Self.root)/service1"]?["org.bluez.GattService1"])
        #expect(service["UUID"]?["data"] as? String == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(service["Primary"]?["data"] as? Bool == true)
    }

    @Test func propertiesAnswerGetAndGetAll() throws {
        let bus = try PrivateBus()
        let (application, _) = try start(bus)
        defer { application.stop() }
        let flags = try bus.busctl(
            ["get-property", application.uniqueName, "\(Self.root)/service0/char0", "org.bluez.GattCharacteristic1", "Flags"])
        #expect(flags.status == 0, "\(flags.error)")
        #expect((flags.json as? [String: Any])?["data"] as? [String] == ["encrypt-read"])
        let unknown = try bus.busctl(
            ["get-property", application.uniqueName, "\(Self.root)/service0/char0", "org.bluez.GattCharacteristic1", "Value"])
        #expect(unknown.status != 0)
    }

    @Test func aWriteComesBackWithTheDeviceBluetoothdNames() throws {
        let bus = try PrivateBus()
        let (application, events) = try start(bus)
        defer { application.stop() }
        // As bluetoothd 5.66 calls it for a Write Command from a phone.
        let answer = try bus.busctl([
            "call", application.uniqueName, "\(Self.root)/service0/char1", "org.bluez.GattCharacteristic1", "WriteValue", "aya{sv}",
            "3", "10", "1", "2", "4", "device", "o", "/org/bluez/hci0/dev_4C_11_22_33_44_55", "link", "s", "LE", "mtu", "q", "185",
            "type", "s", "command",
        ])
        #expect(answer.status == 0, "\(answer.error)")
        let rx = try #require(Self.database.characteristic(AccessoryGATTService.qorvoRX))
        let event = events.first { if case .client = $0 { true } else { false } }
        #expect(
            event
                == .client(
                    device: "/org/bluez/hci0/dev_4C_11_22_33_44_55",
                    .write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: rx.valueHandle, value: [10, 1, 2], withResponse: false)))
        // The node knows the writer by its device path, as it knows a kernel ATT link by its number.
        #expect(
            event?.clientEvent
                == .client(
                    GATTClient("/org/bluez/hci0/dev_4C_11_22_33_44_55"),
                    .write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: rx.valueHandle, value: [10, 1, 2], withResponse: false)))
    }

    @Test func refusedCallsGetBlueZsErrorNamesAndReachNobody() throws {
        let bus = try PrivateBus()
        let (application, events) = try start(bus)
        defer { application.stop() }
        let token = "\(Self.root)/service2/char0"
        let long = try bus.gdbus([
            "--dest", application.uniqueName, "--object-path", token, "--method", "org.bluez.GattCharacteristic1.WriteValue",
            "[" + Array(repeating: "byte 0x01", count: 65).joined(separator: ", ") + "]", "@a{sv} {}",
        ])
        #expect(long.status != 0)
        #expect(long.error.contains("org.bluez.Error.InvalidValueLength"), "\(long.error)")
        let read = try bus.gdbus([
            "--dest", application.uniqueName, "--object-path", token, "--method", "org.bluez.GattCharacteristic1.ReadValue", "@a{sv} {}",
        ])
        #expect(read.error.contains("org.bluez.Error.NotPermitted"), "\(read.error)")
        let malformed = try bus.gdbus([
            "--dest", application.uniqueName, "--object-path", token, "--method", "org.bluez.GattCharacteristic1.WriteValue", "'text'", "@a{sv} {}",
        ])
        #expect(malformed.error.contains("org.freedesktop.DBus.Error.InvalidArgs"), "\(malformed.error)")
        // A token of the longest length is taken (the refusals above reached nobody).
        let fits = try bus.gdbus([
            "--dest", application.uniqueName, "--object-path", token, "--method", "org.bluez.GattCharacteristic1.WriteValue",
            "[" + Array(repeating: "byte 0x02", count: 64).joined(separator: ", ") + "]", "@a{sv} {}",
        ])
        #expect(fits.status == 0, "\(fits.error)")
        let written = events.first { if case .client = $0 { true } else { false } }
        #expect(events.all.count == 1)
        guard case .client(device: nil, .write(characteristic: AccessoryGATTService.tokenCharacteristic, _, let value, withResponse: true))? = written
        else {
            Issue.record("not the token write: \(String(describing: written))")
            return
        }
        #expect(value == Array(repeating: 2, count: 64))
    }

    @Test func readValueAnswersFromTheOffset() throws {
        let bus = try PrivateBus()
        let (application, _) = try start(bus)
        defer { application.stop() }
        let answer = try bus.busctl([
            "call", application.uniqueName, "\(Self.root)/service0/char0", "org.bluez.GattCharacteristic1", "ReadValue", "a{sv}",
            "1", "offset", "q", "7",
        ])
        #expect(answer.status == 0, "\(answer.error)")
        let reply = answer.json as? [String: Any]
        #expect(reply?["type"] as? String == "ay")
        #expect((reply?["data"] as? [Any])?.first as? [Int] == Array("bridge".utf8).map(Int.init))
    }

    @Test func startNotifyThenANotificationIsPropertiesChangedOnValue() throws {
        let bus = try PrivateBus()
        let (application, events) = try start(bus)
        defer { application.stop() }
        let tx = "\(Self.root)/service0/char2"
        let started = try bus.busctl(["call", application.uniqueName, tx, "org.bluez.GattCharacteristic1", "StartNotify"])
        #expect(started.status == 0, "\(started.error)")
        #expect(
            events.first { if case .client = $0 { true } else { false } }
                == .client(device: nil, .subscription(characteristic: AccessoryGATTService.qorvoTX, .notifications)))
        let monitor = try bus.monitor("type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'")
        // dbus-monitor says nothing when it is ready: notify until it has seen one.
        for _ in 0..<100 where !monitor.text.contains("PropertiesChanged") {
            application.notify(AccessoryGATTService.qorvoTX, value: [0x01, 0xA5])
            usleep(100_000)
        }
        let text = monitor.text
        #expect(text.contains("path=\(tx); interface=org.freedesktop.DBus.Properties; member=PropertiesChanged"), "\(text)")
        #expect(text.contains("string \"org.bluez.GattCharacteristic1\""), "\(text)")
        #expect(text.contains("string \"Value\""), "\(text)")
        #expect(text.contains("array of bytes [") && text.contains("01 a5"), "\(text)")
        let stopped = try bus.busctl(["call", application.uniqueName, tx, "org.bluez.GattCharacteristic1", "StopNotify"])
        #expect(stopped.status == 0)
        let notifyingRX = try bus.busctl(["call", application.uniqueName, "\(Self.root)/service0/char1", "org.bluez.GattCharacteristic1", "StartNotify"])
        #expect(notifyingRX.status != 0)
    }

    /// bluetoothd's side from a GLib stand-in: it reads the objects while RegisterApplication is
    /// still unanswered, as bluetoothd does. Started after the application (bluetoothd starting
    /// or restarting), it gets a registration of its own.
    @Test func bluetoothdThatComesLaterGetsTheApplicationAndReadsItBeforeAnswering() throws {
        let bus = try PrivateBus()
        let (application, events) = try start(bus, adapter: "hci0", advertising: [AccessoryGATTService.qorvoService])
        defer { application.stop() }
        #expect(events.first { if case .registrationFailed(.application, _, _) = $0 { true } else { false } } != nil)
        #expect(events.first { if case .registrationFailed(.advertisement, _, _) = $0 { true } else { false } } != nil)
        let bluetoothd = try bus.gattManagerStandIn()
        #expect(bluetoothd.line { $0 == "ready" } != nil, "\(bluetoothd.text)")
        let line = try #require(bluetoothd.line { $0.hasPrefix("{\"sender") }, "\(bluetoothd.text)")
        let call = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(call["sender"] as? String == application.uniqueName)
        #expect(call["adapter"] as? String == "/org/bluez/hci0")
        #expect(call["application"] as? String == Self.root)
        let objects = try #require(call["objects"] as? [String: [String: [String: Any]]])
        #expect(objects.count == 9)
        let rx = try #require(objects["\(Self.root)/service0/char1"]?["org.bluez.GattCharacteristic1"])
        #expect(rx["UUID"] as? String == "2e93998a-6a61-11ed-a1eb-0242ac120002")
        #expect(rx["Flags"] as? [String] == ["write-without-response", "write"])
        #expect(rx["Service"] as? String == "\(Self.root)/service0")
        #expect(events.first { $0 == .registered(.application) } != nil, "\(events.all)")

        // The advertisement, as bluetoothd reads it (GetAll on LEAdvertisement1) before answering.
        let advertised = try #require(bluetoothd.line { $0.hasPrefix("{\"advertisement") }, "\(bluetoothd.text)")
        let advertisement = try #require(try JSONSerialization.jsonObject(with: Data(advertised.utf8)) as? [String: Any])
        #expect(advertisement["advertisement"] as? String == "/org/nearbybridge/advertisement")
        let properties = try #require(advertisement["properties"] as? [String: Any])
        #expect(properties["Type"] as? String == "peripheral")
        #expect(properties["ServiceUUIDs"] as? [String] == ["2e938fd0-6a61-11ed-a1eb-0242ac120002"])
        #expect(events.first { $0 == .registered(.advertisement) } != nil, "\(events.all)")
        // Release on another object is nobody's; bluetoothd drops the advertisement with Release, a no-reply call.
        let stray = try bus.busctl([
            "--expect-reply=no", "call", application.uniqueName, "\(Self.root)/service0/char1", "org.bluez.LEAdvertisement1", "Release",
        ])
        #expect(stray.status == 0, "\(stray.error)")
        let released = try bus.busctl([
            "--expect-reply=no", "call", application.uniqueName, "/org/nearbybridge/advertisement", "org.bluez.LEAdvertisement1", "Release",
        ])
        #expect(released.status == 0, "\(released.error)")
        #expect(events.first { $0 == .advertisementReleased } != nil, "\(events.all)")
        #expect(events.all.filter { $0 == .advertisementReleased }.count == 1, "\(events.all)")
    }

    @Test func aBusThatGoesAwayIsReported() throws {
        let bus = try PrivateBus()
        let (application, events) = try start(bus)
        bus.stopDaemon()
        let lost = events.first { if case .lost = $0 { true } else { false } }
        #expect(lost != nil, "\(events.all)")
        // The bus thread has ended: calls now reach nothing and report nothing.
        application.notify(AccessoryGATTService.qorvoTX, value: [1])
        application.stop()
        #expect(events.all.count == 1)
    }

    @Test func registeringWhereNoBluetoothdRunsFailsWithTheBussAnswer() throws {
        let bus = try PrivateBus()
        let (application, events) = try start(bus, adapter: "hci0")
        defer { application.stop() }
        let failure = events.first { if case .registrationFailed = $0 { true } else { false } }
        guard case .registrationFailed(.application, let name, _)? = failure else {
            Issue.record("no registration answer: \(events.all)")
            return
        }
        #expect(name == "org.freedesktop.DBus.Error.ServiceUnknown")
    }

    /// bluetoothd reports a client's link end only as its device's Connected going false: the
    /// node takes it as that client's close, and nothing else as one.
    @Test func aDeviceNoLongerConnectedIsItsClientClosing() {
        let device = "/org/bluez/hci0/dev_4C_11_22_33_44_55"
        #expect(GATTDBusEvent.disconnected(device: device).clientEvent == .closed(GATTClient(device)))
        #expect(GATTDBusEvent.advertisementReleased.clientEvent == nil)
        #expect(GATTDBusEvent.registered(.application).clientEvent == nil)
    }
}
