/// What a GATT backend tells the node about a client, alike for the kernel's ATT channel and
/// bluetoothd over D-Bus: what the client did (a write, a subscription change, a confirmation:
/// never `.send`, which backends perform themselves), or that it has gone.
package enum GATTClientEvent: Hashable, Sendable {
    case client(GATTClient, ATTServerAction)
    /// The client's link ended (or its backend stopped serving it).
    case closed(GATTClient)
}
