/// What the D-Bus backend registers with bluetoothd on an adapter.
package enum GATTDBusRegistration: Hashable, Sendable {
    /// The GATT application (GattManager1.RegisterApplication).
    case application
    /// The advertisement that names the services (LEAdvertisingManager1.RegisterAdvertisement).
    case advertisement
}
