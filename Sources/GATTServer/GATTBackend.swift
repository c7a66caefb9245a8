/// The seam between the node and whatever serves the rig's GATT database: the kernel's LE ATT
/// channel where no bluetoothd runs, bluetoothd over D-Bus where it does. Both report their
/// clients as `GATTClientEvent`s, so the node cannot tell them apart.
package protocol GATTBackend: AnyObject, Sendable {
    /// Starts handing the node its clients' events (on the backend's threads); called once,
    /// when the node starts.
    func start(events: @escaping @Sendable (GATTClientEvent) -> Void)
    /// Sends `value` to `client` as a notification of `characteristic`, without waiting: queued,
    /// or dropped with a log line (a client that went, one that did not subscribe).
    func notify(_ client: GATTClient, characteristic: GATTUUID, value: [UInt8])
    /// Stops serving: the clients' links end (or bluetoothd drops the application), without
    /// waiting. The node calls it once, when it stops.
    func stop()
}
