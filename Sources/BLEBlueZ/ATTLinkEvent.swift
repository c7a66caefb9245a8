import BLE
import GATTServer

/// What `ATTListener` tells the bridge about its links: the channel is the handle to notify on,
/// and the same object comes with every event of its link.
package enum ATTLinkEvent: Sendable {
    /// A client connected on the LE ATT channel.
    case opened(ATTChannel, peer: BLEAddress)
    /// The client wrote, subscribed or confirmed (never `.send`: the channel sends those itself).
    case client(ATTChannel, ATTServerAction)
    /// The link ended; its descriptor is closed.
    case closed(ATTChannel)
}

extension ATTLinkEvent {
    /// The event as the node takes it from any GATT backend (nil for `.opened`: a client is
    /// known by what it writes).
    package var clientEvent: GATTClientEvent? {
        switch self {
        case .opened: nil
        case .client(let channel, let action): .client(channel.client, action)
        case .closed(let channel): .closed(channel.client)
        }
    }
}
