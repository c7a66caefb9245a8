
/// The commands the BlueZ backend sends.
package enum MgmtCommand: Equatable, Sendable {
    case readVersion
    case readControllerIndexList
    case readControllerInfo
    case setPowered(Bool)
    case setConnectable(Bool)
    case setLowEnergy(Bool)
    /// Privacy mode (0 off, 1 on) and the identity resolving key the addresses derive from,
    /// given most significant octet first as the Core specification writes keys; on the wire
    /// least significant first, like every mgmt value (the kernel's `smp_e` reverses it for
    /// AES). The kernel takes it only while the controller is powered off.
    case setPrivacy(mode: UInt8, identityResolvingKey: [UInt8])
    case readAdvertisingFeatures
    case addAdvertising(instance: UInt8, flags: AdvertisingFlags, duration: UInt16, timeout: UInt16, data: [UInt8], scanResponse: [UInt8])
    case removeAdvertising(instance: UInt8)
    /// Add Extended Advertising Parameters: the instance's flags, timeout and, where `flags` says
    /// so, its interval range (0.625 ms units) and TX power (dBm; 127: no preference). The
    /// instance goes on air with the Add Extended Advertising Data that follows.
    case addExtendedAdvertisingParameters(
        instance: UInt8, flags: AdvertisingFlags, duration: UInt16, timeout: UInt16, minInterval: UInt32, maxInterval: UInt32,
        txPower: Int8)
    case addExtendedAdvertisingData(instance: UInt8, data: [UInt8], scanResponse: [UInt8])
    /// Address types as a bit mask: 1 << type; LE only is 0x06.
    case startDiscovery(addressTypes: UInt8)
    case stopDiscovery(addressTypes: UInt8)

    /// Which command this is, without its parameters.
    package var code: MgmtOpcode {
        switch self {
        case .readVersion: .readVersion
        case .readControllerIndexList: .readControllerIndexList
        case .readControllerInfo: .readControllerInfo
        case .setPowered: .setPowered
        case .setConnectable: .setConnectable
        case .setLowEnergy: .setLowEnergy
        case .setPrivacy: .setPrivacy
        case .startDiscovery: .startDiscovery
        case .stopDiscovery: .stopDiscovery
        case .readAdvertisingFeatures: .readAdvertisingFeatures
        case .addAdvertising: .addAdvertising
        case .removeAdvertising: .removeAdvertising
        case .addExtendedAdvertisingParameters: .addExtendedAdvertisingParameters
        case .addExtendedAdvertisingData: .addExtendedAdvertisingData
        }
    }

    package var opcode: UInt16 { code.rawValue }

    package var parameters: [UInt8] {
        switch self {
        case .readVersion, .readControllerIndexList, .readControllerInfo, .readAdvertisingFeatures: []
        case .setPowered(let on), .setConnectable(let on), .setLowEnergy(let on): [on ? 1 : 0]
        case .setPrivacy(let mode, let key):
            {
                precondition(key.count == 16, "an identity resolving key is 16 bytes")
                return [mode] + key.reversed()
            }()
        case .startDiscovery(let types), .stopDiscovery(let types): [types]
        case .removeAdvertising(let instance): [instance]
        case .addAdvertising(let instance, let flags, let duration, let timeout, let data, let scanResponse):
            {
                precondition(data.count <= 255 && scanResponse.count <= 255, "advertising data is at most 255 bytes")
                var p: [UInt8] = [instance]
                p.appendLE(flags.rawValue)
                p.appendLE(duration)
                p.appendLE(timeout)
                p.append(UInt8(data.count))
                p.append(UInt8(scanResponse.count))
                return p + data + scanResponse
            }()
        case .addExtendedAdvertisingParameters(let instance, let flags, let duration, let timeout, let minInterval, let maxInterval, let txPower):
            {
                var p: [UInt8] = [instance]
                p.appendLE(flags.rawValue)
                p.appendLE(duration)
                p.appendLE(timeout)
                p.appendLE(minInterval)
                p.appendLE(maxInterval)
                return p + [UInt8(bitPattern: txPower)]
            }()
        case .addExtendedAdvertisingData(let instance, let data, let scanResponse):
            {
                precondition(data.count <= 255 && scanResponse.count <= 255, "advertising data is at most 255 bytes")
                return [instance, UInt8(data.count), UInt8(scanResponse.count)] + data + scanResponse
            }()
        }
    }

    package func packet(index: UInt16) -> MgmtPacket {
        MgmtPacket(code: opcode, index: index, parameters: parameters)
    }

    /// The command's name as the mgmt documentation spells it, for errors.
    package var name: String { code.description }
}

/// Read Controller Index List return parameters.
package func controllerIndexes(returnParameters: [UInt8]) throws(MgmtError) -> [UInt16] {
    var r = Reader(returnParameters, context: "index list")
    let count = Int(try r.u16("num_controllers"))
    var indexes: [UInt16] = []
    for _ in 0..<count { indexes.append(try r.u16("index")) }
    return indexes
}
