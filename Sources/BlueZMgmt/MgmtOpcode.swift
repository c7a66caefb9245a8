/// The opcodes of the commands the BlueZ backend sends: what errors say failed, and what callers
/// switch on (never on a name).
package enum MgmtOpcode: UInt16, Hashable, Sendable, CustomStringConvertible {
    case readVersion = 0x0001
    case readControllerIndexList = 0x0003
    case readControllerInfo = 0x0004
    case setPowered = 0x0005
    case setConnectable = 0x0007
    case setLowEnergy = 0x000D
    case startDiscovery = 0x0023
    case stopDiscovery = 0x0024
    case setPrivacy = 0x002F
    case readAdvertisingFeatures = 0x003D
    case addAdvertising = 0x003E
    case removeAdvertising = 0x003F
    case addExtendedAdvertisingParameters = 0x0054
    case addExtendedAdvertisingData = 0x0055

    /// The name as the mgmt documentation spells it.
    package var description: String {
        switch self {
        case .readVersion: "Read Management Version Information"
        case .readControllerIndexList: "Read Controller Index List"
        case .readControllerInfo: "Read Controller Information"
        case .setPowered: "Set Powered"
        case .setConnectable: "Set Connectable"
        case .setLowEnergy: "Set Low Energy"
        case .setPrivacy: "Set Privacy"
        case .readAdvertisingFeatures: "Read Advertising Features"
        case .addAdvertising: "Add Advertising"
        case .removeAdvertising: "Remove Advertising"
        case .addExtendedAdvertisingParameters: "Add Extended Advertising Parameters"
        case .addExtendedAdvertisingData: "Add Extended Advertising Data"
        case .startDiscovery: "Start Discovery"
        case .stopDiscovery: "Stop Discovery"
        }
    }
}
