#!/usr/bin/python3
"""bluetoothd's GattManager1 and LEAdvertisingManager1 on a test bus, written with GLib's GDBus
(Debian's python3-gi).

Owns org.bluez on the bus at argv[1] and exports /org/bluez/hci0 with
org.bluez.GattManager1.RegisterApplication(o application, a{sv} options). As bluetoothd does
(src/gatt-database.c), it reads the application's objects with the ObjectManager's
GetManagedObjects *before* it answers; then it prints one JSON line to stdout (the caller, the
application path and the objects, GLib's own decoding of them) and answers.
RegisterAdvertisement likewise reads the advertisement's properties (GetAll on
org.bluez.LEAdvertisement1, src/advertising.c) and prints them. It prints "ready" once it owns
the name.
"""
import json
import sys

from gi.repository import Gio, GLib

INTERFACE = """
<node>
  <interface name="org.bluez.GattManager1">
    <method name="RegisterApplication">
      <arg type="o" name="application" direction="in"/>
      <arg type="a{sv}" name="options" direction="in"/>
    </method>
  </interface>
  <interface name="org.bluez.LEAdvertisingManager1">
    <method name="RegisterAdvertisement">
      <arg type="o" name="advertisement" direction="in"/>
      <arg type="a{sv}" name="options" direction="in"/>
    </method>
  </interface>
</node>
"""


def on_call(connection, sender, path, interface, method, parameters, invocation):
    if method == "RegisterAdvertisement":
        advertisement, _options = parameters.unpack()
        properties = connection.call_sync(
            sender, advertisement, "org.freedesktop.DBus.Properties", "GetAll", GLib.Variant("(s)", ("org.bluez.LEAdvertisement1",)),
            GLib.VariantType.new("(a{sv})"), Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
        print(json.dumps({"advertisement": advertisement, "properties": properties}), flush=True)
        invocation.return_value(None)
        return
    application, _options = parameters.unpack()
    objects = connection.call_sync(
        sender, application, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", None,
        GLib.VariantType.new("(a{oa{sa{sv}}})"), Gio.DBusCallFlags.NONE, 5000, None).unpack()[0]
    print(json.dumps({"sender": sender, "adapter": path, "application": application, "objects": objects}), flush=True)
    invocation.return_value(None)


def main():
    connection = Gio.DBusConnection.new_for_address_sync(
        sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    node = Gio.DBusNodeInfo.new_for_xml(INTERFACE)
    for interface in node.interfaces:
        connection.register_object("/org/bluez/hci0", interface, on_call, None, None)
    loop = GLib.MainLoop()
    Gio.bus_own_name_on_connection(
        connection, "org.bluez", Gio.BusNameOwnerFlags.NONE, lambda *_: print("ready", flush=True), lambda *_: loop.quit())
    loop.run()


main()
