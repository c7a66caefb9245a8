import CSystemd

/// Whether a well-known name has an owner on a bus (`org.freedesktop.DBus.NameHasOwner`): `run`
/// asks it of `org.bluez` to tell whether bluetoothd serves the adapters, which decides the GATT
/// backend phones reach (bluetoothd's over D-Bus, or the kernel's ATT channel).
package enum BusNameOwner {
    package static func exists(_ name: String, on address: GATTDBusApplication.Address) throws(BusFailure) -> Bool {
        let bus = try GATTDBusApplication.connect(address)
        defer { sd_bus_flush_close_unref(bus) }
        var raw: OpaquePointer?
        try BusFailure.check(
            sd_bus_message_new_method_call(bus, &raw, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner"),
            "sd_bus_message_new_method_call(NameHasOwner)")
        defer { sd_bus_message_unref(raw) }
        try BusMessage(raw: raw!).append(.string(name))
        var reply: OpaquePointer?
        var error = sd_bus_error()
        defer {
            sd_bus_error_free(&error)
            sd_bus_message_unref(reply)
        }
        try BusFailure.check(sd_bus_call(bus, raw, 0, &error, &reply), "NameHasOwner(\(name))")
        var owned: Int32 = 0
        try BusFailure.check(sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "b")), &owned), "reading NameHasOwner's answer")
        return owned != 0
    }
}
