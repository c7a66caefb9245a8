import GATTServer

/// What the D-Bus GATT backend tells the bridge. The client's own actions come as the same
/// `ATTServerAction`s the kernel-socket backend reports, so the bridge handles both alike.
package enum GATTDBusEvent: Hashable, Sendable {
    /// bluetoothd took the application or the advertisement (the Register call answered).
    case registered(GATTDBusRegistration)
    /// bluetoothd refused it or never answered: the D-Bus error's name and text.
    case registrationFailed(GATTDBusRegistration, name: String, message: String)
    /// bluetoothd dropped the advertisement (LEAdvertisement1.Release: the adapter went away, or
    /// it could not be kept).
    case advertisementReleased
    /// The bus connection failed (the bus daemon went away): nothing is served any more.
    case lost(String)
    /// A client wrote or changed its subscription. `device` is bluetoothd's object path of the
    /// writer (`/org/bluez/hci0/dev_…`, from the `device` option) when bluetoothd names it;
    /// StartNotify and StopNotify name nobody (bluetoothd calls them once for all clients).
    case client(device: String?, ATTServerAction)
    /// bluetoothd says a device is no longer connected (its `Device1.Connected` went false): the
    /// end of a client's link, which the GATT API itself never reports.
    case disconnected(device: String)
}

extension GATTDBusEvent {
    /// The event as the node takes it from any GATT backend: a client's action or its link's
    /// end, named by its device path (nil for the rest, and for StartNotify/StopNotify, which name
    /// nobody).
    package var clientEvent: GATTClientEvent? {
        switch self {
        case .client(let device?, let action): .client(GATTClient(device), action)
        case .disconnected(let device): .closed(GATTClient(device))
        default: nil
        }
    }
}
