import CLinux
import CSystemd
import GATTServer
import Glibc
import Logging
import StreamIO
import Synchronization

/// The GATT backend beside bluetoothd (issue 33): exports a `GATTDatabase` as a BlueZ GATT
/// application over D-Bus and registers it with the adapter's GattManager1, so bluetoothd serves
/// it to phones on its own ATT channel, and registers an advertisement naming the services with
/// LEAdvertisingManager1, so that phones find it. Writes and subscriptions come back as
/// `GATTDBusEvent`s; `notify` sends a characteristic's new value.
///
/// One thread owns the sd-bus connection (sd-bus is not thread-safe): it dispatches bluetoothd's
/// calls and runs what other threads post (`notify`, `stop`), woken by an eventfd.
///
/// Notifications go out as PropertiesChanged on the characteristic's `Value`. bluetoothd sends
/// that to every client subscribed to the characteristic: BlueZ before 5.69 (Debian 12 and
/// Raspberry Pi OS bookworm ship 5.66) has no way to notify one device of several (5.69 gave
/// AcquireNotify a socket per device).
package final class GATTDBusApplication: GATTBackend, @unchecked Sendable {
    // @unchecked: `bus` is touched only on the bus thread (set up before it starts, closed when
    // it ends); other threads only append to `state`'s jobs under its lock and write the eventfd.
    package enum Address: Sendable {
        /// The system bus, where bluetoothd is.
        case system
        /// Another bus (a test's private dbus-daemon), e.g. `unix:path=/tmp/bus`.
        case address(String)
    }

    private struct State {
        var jobs: [@Sendable (GATTDBusApplication) -> Void] = []
        var stopping = false
        /// The bus thread has ended and closed `wake`: nothing may write it any more (its number
        /// may already name another file).
        var ended = false
    }

    private let bus: OpaquePointer
    private let wake: Int32
    private let state = Mutex(State())
    private let tree: GATTObjectTree
    /// The advertisement naming the services, if any.
    private let advertisement: GATTObjectTree.Object?
    private let database: GATTDatabase
    private let logger: Logger
    private let handler: @Sendable (GATTDBusEvent) -> Void
    /// Where the node's share of the events (`GATTClientEvent`s) goes.
    private let sink: GATTClientEventSink
    /// The adapter registered on; set once before the bus thread starts, read on it.
    private var restartAdapter: String?

    /// The bus name others reach this application at (`:1.42`).
    package let uniqueName: String

    private init(
        bus: OpaquePointer, wake: Int32, uniqueName: String, database: GATTDatabase, root: String,
        advertisement: GATTObjectTree.Object?, logger: Logger, sink: GATTClientEventSink,
        handler: @escaping @Sendable (GATTDBusEvent) -> Void
    ) {
        self.bus = bus
        self.wake = wake
        self.uniqueName = uniqueName
        self.database = database
        self.tree = GATTObjectTree(database, root: root)
        self.advertisement = advertisement
        self.logger = logger
        self.sink = sink
        self.handler = { event in
            handler(event)
            if let client = event.clientEvent { sink.send(client) }
        }
    }

    /// Connects to `address`, exports `database` under `root` and, when `advertising` names
    /// services, an advertisement listing them at `advertisementPath` (outside `root`: GattManager1
    /// reads everything under it); when `adapter` is given (`hci0`), registers both with that
    /// adapter's GattManager1 and LEAdvertisingManager1, each answer a `.registered` or
    /// `.registrationFailed`. `handler` runs on the bus thread with every event; the node's share
    /// (`GATTClientEvent`s) also goes where `start(events:)` says.
    package static func start(
        on address: Address, adapter: String?, database: GATTDatabase, root: String = "/org/nearbybridge/gatt",
        advertising: [GATTUUID] = [], advertisementPath: String = "/org/nearbybridge/advertisement",
        logger: Logger, handler: @escaping @Sendable (GATTDBusEvent) -> Void
    ) throws(BusFailure) -> GATTDBusApplication {
        let bus = try connect(address)
        var name: UnsafePointer<CChar>?
        do {
            // Hello's answer names us: wait for it, so that tests and logs can use the name.
            try BusFailure.check(sd_bus_get_unique_name(bus, &name), "sd_bus_get_unique_name")
        } catch {
            sd_bus_flush_close_unref(bus)
            throw error
        }
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            let code = errno
            sd_bus_flush_close_unref(bus)
            throw BusFailure(call: "eventfd", errno: code)
        }
        let application = GATTDBusApplication(
            bus: bus, wake: wake, uniqueName: name.map { String(cString: $0) } ?? "", database: database, root: root,
            advertisement: advertising.isEmpty ? nil : LEAdvertisementObject.object(at: advertisementPath, serviceUUIDs: advertising),
            logger: logger, sink: GATTClientEventSink(), handler: handler)
        do {
            let userdata = Unmanaged.passUnretained(application).toOpaque()
            try BusFailure.check(sd_bus_add_fallback(bus, nil, root, Self.dispatch, userdata), "sd_bus_add_fallback")
            if let advertisement = application.advertisement {
                try BusFailure.check(sd_bus_add_object(bus, nil, advertisement.path, Self.dispatch, userdata), "sd_bus_add_object")
            }
            if let adapter {
                try application.register(adapter: adapter)
                try application.registerAgainWhenBluetoothdRestarts(adapter: adapter)
                try application.watchDisconnections()
            }
        } catch {
            sd_bus_flush_close_unref(bus)
            Glibc.close(wake)
            throw error
        }
        IOThread.detach(name: "gatt-dbus") { application.run() }
        return application
    }

    package func start(events: @escaping @Sendable (GATTClientEvent) -> Void) {
        sink.set(events)
    }

    /// Sends `value` as the characteristic's new value to the clients subscribed to it.
    package func notify(_ characteristic: GATTUUID, value: [UInt8]) {
        post { application in
            do {
                try application.emitValueChanged(characteristic, value: value)
            } catch {
                application.logger.warning("could not send a GATT notification over D-Bus", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The node's notification for one client. bluetoothd before 5.69 offers no per-device
    /// notification (AcquireNotify's per-client sockets came in 5.69): the value goes to every
    /// client subscribed to the characteristic, which each phone's app tells apart only by
    /// what it expects next.
    package func notify(_ client: GATTClient, characteristic: GATTUUID, value: [UInt8]) {
        notify(characteristic, value: value)
    }

    /// Closes the connection; bluetoothd then drops the application (GattManager1 unregisters an
    /// application whose connection ends).
    package func stop() {
        state.withLock { state in
            state.stopping = true
            wakeUp(state)
        }
    }

    // MARK: the bus thread

    private func run() {
        while true {
            let (jobs, stopping) = state.withLock { state in
                defer { state.jobs = [] }
                return (state.jobs, state.stopping)
            }
            for job in jobs { job(self) }
            if stopping { break }
            var processed: Int32
            repeat { processed = sd_bus_process(bus, nil) } while processed > 0
            if processed < 0 {
                let failure = BusFailure(call: "sd_bus_process", errno: -processed)
                logger.error("the D-Bus connection failed; the GATT application is gone", metadata: ["error": "\(failure)"])
                handler(.lost(failure.description))
                break
            }
            waitForWork()
        }
        sd_bus_flush_close_unref(bus)
        state.withLock { state in
            state.ended = true
            Glibc.close(wake)
        }
    }

    /// Polls the bus's descriptor (for what sd-bus waits for, until its next timeout) beside the
    /// eventfd that `post` and `stop` write.
    private func waitForWork() {
        var timeout: UInt64 = 0
        var milliseconds: Int32 = -1
        if sd_bus_get_timeout(bus, &timeout) > 0, timeout != UInt64.max {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            milliseconds = timeout <= nowMicroseconds ? 0 : Int32(min((timeout - nowMicroseconds + 999) / 1000, UInt64(Int32.max)))
        }
        var descriptors = [
            pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        _ = poll(&descriptors, 2, milliseconds)
        if descriptors[1].revents & Int16(POLLIN) != 0 {
            var count: UInt64 = 0
            _ = read(wake, &count, 8)
        }
    }

    private func post(_ job: @escaping @Sendable (GATTDBusApplication) -> Void) {
        state.withLock { state in
            state.jobs.append(job)
            wakeUp(state)
        }
    }

    /// Wakes the bus thread; called under `state`'s lock, so that `wake` is still open.
    private func wakeUp(_ state: State) {
        guard !state.ended else { return }
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    private static let dispatch: sd_bus_message_handler_t = { message, userdata, error in
        guard let message, let userdata, let error else { return 0 }
        let application = Unmanaged<GATTDBusApplication>.fromOpaque(userdata).takeUnretainedValue()
        return application.handle(BusMessage(raw: message), error: error)
    }

    /// One call to an object under the root: > 0 answered, 0 not ours (sd-bus answers
    /// UnknownMethod), < 0 failed with `error` set (sd-bus answers with it).
    private func handle(_ message: BusMessage, error replyError: UnsafeMutablePointer<sd_bus_error>) -> Int32 {
        guard let path = message.path else { return 0 }
        do throws(GATTDBusCallError) {
            if path == tree.root, message.isMethodCall("org.freedesktop.DBus.ObjectManager", "GetManagedObjects") {
                return try reply(to: message) { reply throws(BusFailure) in try appendManagedObjects(reply) }
            }
            guard let object = tree.object(at: path) ?? advertisement.flatMap({ $0.path == path ? $0 : nil }) else { return 0 }
            if message.isMethodCall("org.freedesktop.DBus.Properties", "GetAll") {
                let interface = try GATTDBusCallError.wrapping(GATTDBusCallError.malformed) { () throws(BusFailure) in try message.readString() }
                let properties = interface == object.interface ? object.properties : []
                return try reply(to: message) { reply throws(BusFailure) in
                    try reply.appendProperties(properties.map { ($0.name, $0.value) })
                }
            }
            if message.isMethodCall("org.freedesktop.DBus.Properties", "Get") {
                let (interface, name) = try GATTDBusCallError.wrapping(GATTDBusCallError.malformed) { () throws(BusFailure) in
                    (try message.readString(), try message.readString())
                }
                guard interface == object.interface, let property = object.properties.first(where: { $0.name == name }) else {
                    throw .refused("org.freedesktop.DBus.Error.UnknownProperty", "no property \(interface).\(name) at \(path)")
                }
                return try reply(to: message) { reply throws(BusFailure) in try reply.appendVariant(property.value) }
            }
            if object.interface == LEAdvertisementObject.interface, message.isMethodCall(LEAdvertisementObject.interface, "Release") {
                handler(.advertisementReleased)
                // Release is a no-reply call; answer only if an answer is expected.
                guard sd_bus_message_get_expect_reply(message.raw) > 0 else { return 1 }
                return try reply(to: message) { _ throws(BusFailure) in }
            }
            guard object.interface == GATTObjectTree.characteristicInterface, let index = tree.characteristic(at: path) else { return 0 }
            let characteristic = database.characteristics[index]
            if message.isMethodCall(GATTObjectTree.characteristicInterface, "ReadValue") {
                let options = try GATTDBusCallError.wrapping(GATTDBusCallError.malformed) { () throws(BusFailure) in try message.readOptions() }
                let value = try GATTCharacteristicCall.read(characteristic.definition, options: options)
                return try reply(to: message) { reply throws(BusFailure) in try reply.append(.bytes(value)) }
            }
            if message.isMethodCall(GATTObjectTree.characteristicInterface, "WriteValue") {
                let (value, options) = try GATTDBusCallError.wrapping(GATTDBusCallError.malformed) { () throws(BusFailure) in
                    (try message.readBytes(), try message.readOptions())
                }
                let withResponse = try GATTCharacteristicCall.write(characteristic.definition, value: value, options: options)
                let answered = try reply(to: message) { _ throws(BusFailure) in }
                handler(
                    .client(
                        device: options.objectPath("device"),
                        .write(characteristic: characteristic.uuid, valueHandle: characteristic.valueHandle, value: value, withResponse: withResponse)))
                return answered
            }
            for (member, configuration) in [("StartNotify", GATTClientConfiguration.notifications), ("StopNotify", GATTClientConfiguration())]
            where message.isMethodCall(GATTObjectTree.characteristicInterface, member) {
                guard characteristic.definition.properties.contains(.notify) else {
                    throw .refused("org.bluez.Error.NotSupported", "\(characteristic.uuid) does not notify")
                }
                let answered = try reply(to: message) { _ throws(BusFailure) in }
                handler(.client(device: nil, .subscription(characteristic: characteristic.uuid, configuration)))
                return answered
            }
            return 0
        } catch {
            logger.debug("refused a D-Bus call", metadata: ["path": "\(path)", "member": "\(message.member ?? "")", "error": "\(error)"])
            return sd_bus_error_set(replyError, error.name, error.message)
        }
    }

    /// Sends the method return `fill` builds; 1 (answered).
    private func reply(to message: BusMessage, _ fill: (BusMessage) throws(BusFailure) -> Void) throws(GATTDBusCallError) -> Int32 {
        try GATTDBusCallError.wrapping(GATTDBusCallError.bus) { () throws(BusFailure) in
            var raw: OpaquePointer?
            try BusFailure.check(sd_bus_message_new_method_return(message.raw, &raw), "sd_bus_message_new_method_return")
            defer { sd_bus_message_unref(raw) }
            try fill(BusMessage(raw: raw!))
            try BusFailure.check(sd_bus_send(nil, raw, nil), "sd_bus_send")
            return 1
        }
    }

    /// `a{oa{sa{sv}}}`: every object, its interface and that interface's properties.
    private func appendManagedObjects(_ reply: BusMessage) throws(BusFailure) {
        try reply.open("a", "{oa{sa{sv}}}")
        for object in tree.objects {
            try reply.open("e", "oa{sa{sv}}")
            try reply.append(.objectPath(object.path))
            try reply.open("a", "{sa{sv}}")
            try reply.open("e", "sa{sv}")
            try reply.append(.string(object.interface))
            try reply.appendProperties(object.properties.map { ($0.name, $0.value) })
            try reply.close()
            try reply.close()
            try reply.close()
        }
        try reply.close()
    }

    private func emitValueChanged(_ characteristic: GATTUUID, value: [UInt8]) throws(BusFailure) {
        guard let index = database.characteristics.firstIndex(where: { $0.uuid == characteristic }), let path = tree.path(ofCharacteristic: index)
        else { throw BusFailure(call: "notify(\(characteristic))", errno: ENOENT) }
        var raw: OpaquePointer?
        try BusFailure.check(
            sd_bus_message_new_signal(bus, &raw, path, "org.freedesktop.DBus.Properties", "PropertiesChanged"), "sd_bus_message_new_signal")
        defer { sd_bus_message_unref(raw) }
        let signal = BusMessage(raw: raw!)
        try signal.append(.string(GATTObjectTree.characteristicInterface))
        try signal.appendProperties([("Value", .bytes(value))])
        try signal.append(.strings([]))
        try BusFailure.check(sd_bus_send(bus, raw, nil), "sd_bus_send(PropertiesChanged)")
    }

    /// Calls GattManager1.RegisterApplication (and LEAdvertisingManager1.RegisterAdvertisement)
    /// without waiting: bluetoothd reads the objects (GetManagedObjects, GetAll) before it
    /// answers, and this thread must be free to serve that.
    private func register(adapter: String) throws(BusFailure) {
        try call(adapter, "org.bluez.GattManager1", "RegisterApplication", path: tree.root, answer: Self.applicationRegistered)
        if let advertisement {
            try call(adapter, "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement", path: advertisement.path, answer: Self.advertisementRegistered)
        }
    }

    /// `member(path, {})` on bluetoothd's adapter object; `answer` gets the reply.
    private func call(_ adapter: String, _ interface: String, _ member: String, path: String, answer: sd_bus_message_handler_t) throws(BusFailure) {
        var raw: OpaquePointer?
        try BusFailure.check(
            sd_bus_message_new_method_call(bus, &raw, "org.bluez", "/org/bluez/\(adapter)", interface, member), "sd_bus_message_new_method_call")
        defer { sd_bus_message_unref(raw) }
        let call = BusMessage(raw: raw!)
        try call.append(.objectPath(path))
        try call.appendProperties([])
        try BusFailure.check(sd_bus_call_async(bus, nil, raw, answer, Unmanaged.passUnretained(self).toOpaque(), 0), "sd_bus_call_async(\(member))")
    }

    /// bluetoothd forgets applications when it exits (`systemctl restart bluetooth`, an
    /// upgrade): when org.bluez has an owner again, register again.
    private func registerAgainWhenBluetoothdRestarts(adapter: String) throws(BusFailure) {
        restartAdapter = adapter
        try BusFailure.check(
            sd_bus_match_signal(
                bus, nil, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", Self.ownerChanged,
                Unmanaged.passUnretained(self).toOpaque()),
            "sd_bus_match_signal(NameOwnerChanged)")
    }

    /// bluetoothd tells a GATT application nothing when a client's link ends; its device object's
    /// `Connected` property going false does (PropertiesChanged from org.bluez on Device1).
    private func watchDisconnections() throws(BusFailure) {
        try BusFailure.check(
            sd_bus_match_signal(
                bus, nil, "org.bluez", nil, "org.freedesktop.DBus.Properties", "PropertiesChanged", Self.deviceChanged,
                Unmanaged.passUnretained(self).toOpaque()),
            "sd_bus_match_signal(PropertiesChanged)")
    }

    private static let deviceChanged: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata, let path = sd_bus_message_get_path(message) else { return 0 }
        let application = Unmanaged<GATTDBusApplication>.fromOpaque(userdata).takeUnretainedValue()
        let signal = BusMessage(raw: message)
        guard (try? signal.readString()) == "org.bluez.Device1", (try? signal.readOptions())?["Connected"] == .bool(false) else { return 0 }
        application.handler(.disconnected(device: String(cString: path)))
        return 0
    }

    private static let ownerChanged: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        let application = Unmanaged<GATTDBusApplication>.fromOpaque(userdata).takeUnretainedValue()
        let signal = BusMessage(raw: message)
        guard let name = try? signal.readString(), name == "org.bluez", (try? signal.readString()) != nil,
            let owner = try? signal.readString(), !owner.isEmpty, let adapter = application.restartAdapter
        else { return 0 }
        application.logger.notice("bluetoothd is back on the bus: registering the GATT application again", metadata: ["adapter": "\(adapter)"])
        do {
            try application.register(adapter: adapter)
        } catch {
            application.handler(.registrationFailed(.application, name: "org.bluez.Error.Failed", message: "\(error)"))
        }
        return 0
    }

    private static let applicationRegistered: sd_bus_message_handler_t = { message, userdata, _ in
        answered(.application, message, userdata)
    }

    private static let advertisementRegistered: sd_bus_message_handler_t = { message, userdata, _ in
        answered(.advertisement, message, userdata)
    }

    private static func answered(_ registration: GATTDBusRegistration, _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
        guard let message, let userdata else { return 0 }
        let application = Unmanaged<GATTDBusApplication>.fromOpaque(userdata).takeUnretainedValue()
        if sd_bus_message_is_method_error(message, nil) > 0, let error = sd_bus_message_get_error(message)?.pointee {
            application.handler(
                .registrationFailed(
                    registration, name: error.name.map { String(cString: $0) } ?? "", message: error.message.map { String(cString: $0) } ?? ""))
        } else {
            application.handler(.registered(registration))
        }
        return 1
    }

    static func connect(_ address: Address) throws(BusFailure) -> OpaquePointer {
        var bus: OpaquePointer?
        switch address {
        case .system:
            try BusFailure.check(sd_bus_open_system(&bus), "sd_bus_open_system")
        case .address(let text):
            try BusFailure.check(sd_bus_new(&bus), "sd_bus_new")
            do {
                try BusFailure.check(sd_bus_set_address(bus, text), "sd_bus_set_address(\(text))")
                try BusFailure.check(sd_bus_set_bus_client(bus, 1), "sd_bus_set_bus_client")
                try BusFailure.check(sd_bus_start(bus), "sd_bus_start(\(text))")
            } catch {
                sd_bus_unref(bus)
                throw error
            }
        }
        return bus!
    }
}
