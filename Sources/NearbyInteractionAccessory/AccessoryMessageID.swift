/// The first octet of every message between a phone's app and the accessory. Apple's Nearby
/// Interaction is silent about the transport; these ids are the ones Apple's accessory sample app
/// ("Implementing spatial interactions with third-party accessories", its `MessageId`) and the
/// Qorvo and NXP accessory firmwares share, so that their apps can talk to a rig unchanged.
package enum AccessoryMessageID: UInt8, CaseIterable, Sendable, CustomStringConvertible {
    /// Accessory → phone: the accessory configuration data follows.
    case accessoryConfigurationData = 0x01
    /// Accessory → phone: the board's session is active (ranging has started).
    case uwbDidStart = 0x02
    /// Accessory → phone: the board's session has ended.
    case uwbDidStop = 0x03
    /// Phone → accessory: send your accessory configuration data.
    case initialize = 0x0A
    /// Phone → accessory: the phone's shareable configuration data follows; start ranging.
    case configureAndStart = 0x0B
    /// Phone → accessory: stop ranging.
    case stop = 0x0C

    /// Whether the phone sends this message (the others are the accessory's).
    package var isFromPhone: Bool { rawValue >= 0x0A }

    package var description: String {
        switch self {
        case .accessoryConfigurationData: "accessory configuration data (0x01)"
        case .uwbDidStart: "UWB did start (0x02)"
        case .uwbDidStop: "UWB did stop (0x03)"
        case .initialize: "initialize (0x0A)"
        case .configureAndStart: "configure and start (0x0B)"
        case .stop: "stop (0x0C)"
        }
    }
}
