/// mgmt status codes (doc/mgmt-protocol.rst, "Status codes"). Kept open: newer kernels add codes.
package struct MgmtStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let success = MgmtStatus(rawValue: 0x00)
    package static let unknownCommand = MgmtStatus(rawValue: 0x01)
    package static let failed = MgmtStatus(rawValue: 0x03)
    package static let noResources = MgmtStatus(rawValue: 0x07)
    package static let busy = MgmtStatus(rawValue: 0x0A)
    package static let rejected = MgmtStatus(rawValue: 0x0B)
    package static let notSupported = MgmtStatus(rawValue: 0x0C)
    package static let invalidParameters = MgmtStatus(rawValue: 0x0D)
    package static let notPowered = MgmtStatus(rawValue: 0x0F)
    package static let invalidIndex = MgmtStatus(rawValue: 0x11)
    package static let rfkilled = MgmtStatus(rawValue: 0x12)
    package static let permissionDenied = MgmtStatus(rawValue: 0x14)

    package var description: String {
        switch self {
        case .success: "Success"
        case .unknownCommand: "Unknown Command"
        case .failed: "Failed"
        case .noResources: "No Resources"
        case .busy: "Busy"
        case .rejected: "Rejected"
        case .notSupported: "Not Supported"
        case .invalidParameters: "Invalid Parameters"
        case .notPowered: "Not Powered"
        case .invalidIndex: "Invalid Index"
        case .rfkilled: "RFKilled"
        case .permissionDenied: "Permission Denied"
        default: "status 0x" + String(rawValue, radix: 16)
        }
    }
}

/// Controller settings bits (Read Controller Information, New Settings).
package struct ControllerSettings: OptionSet, Hashable, Sendable {
    package var rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let powered = ControllerSettings(rawValue: 1 << 0)
    package static let connectable = ControllerSettings(rawValue: 1 << 1)
    package static let discoverable = ControllerSettings(rawValue: 1 << 3)
    package static let bredr = ControllerSettings(rawValue: 1 << 7)
    package static let lowEnergy = ControllerSettings(rawValue: 1 << 9)
    package static let advertising = ControllerSettings(rawValue: 1 << 10)
    /// LE privacy: the kernel advertises, scans and connects from resolvable private addresses
    /// it renews on its own schedule (15 minutes by default).
    package static let privacy = ControllerSettings(rawValue: 1 << 13)
}

/// Add Advertising flags (doc/mgmt-protocol.rst, Add Advertising).
package struct AdvertisingFlags: OptionSet, Hashable, Sendable {
    package var rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let connectable = AdvertisingFlags(rawValue: 1 << 0)
    /// The kernel inserts the Flags AD (general discoverable); our data must not carry one.
    package static let discoverable = AdvertisingFlags(rawValue: 1 << 1)
    package static let limitedDiscoverable = AdvertisingFlags(rawValue: 1 << 2)
    package static let managedFlags = AdvertisingFlags(rawValue: 1 << 3)
    package static let txPower = AdvertisingFlags(rawValue: 1 << 4)
    /// Secondary PHYs: set on an instance, the advert goes out as extended advertising PDUs; in
    /// Read Advertising Features, the controller has LE extended advertising (the kernel then
    /// drives it with the extended HCI commands).
    package static let secondaryLE1M = AdvertisingFlags(rawValue: 1 << 7)
    package static let secondaryLE2M = AdvertisingFlags(rawValue: 1 << 8)
    package static let secondaryLECoded = AdvertisingFlags(rawValue: 1 << 9)
    package static let canSetTxPower = AdvertisingFlags(rawValue: 1 << 10)
    /// Add Extended Advertising Parameters: which optional fields the command sets (kernel 5.10).
    package static let parameterDuration = AdvertisingFlags(rawValue: 1 << 12)
    package static let parameterTimeout = AdvertisingFlags(rawValue: 1 << 13)
    package static let parameterIntervals = AdvertisingFlags(rawValue: 1 << 14)
    package static let parameterTxPower = AdvertisingFlags(rawValue: 1 << 15)
    package static let parameterScanResponse = AdvertisingFlags(rawValue: 1 << 16)
}

/// Address types as mgmt uses them (Device Found, Start Discovery bit positions).
package enum MgmtAddressType: UInt8, Sendable {
    case bredr = 0, lePublic = 1, leRandom = 2
}

/// The commands the BlueZ backend sends.
package enum MgmtCommand: Equatable, Sendable {
    case readVersion
    case readControllerIndexList
    case readControllerInfo
    case setPowered(Bool)
    case setConnectable(Bool)
    case setLowEnergy(Bool)
    /// Privacy mode (0 off, 1 on) and the identity resolving key the addresses derive from.
    /// The kernel takes it only while the controller is powered off.
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
                return [mode] + key
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

package struct DeviceFound: Equatable, Sendable {
    /// Little-endian, as on the wire.
    package var address: [UInt8]
    package var addressType: MgmtAddressType
    /// dBm; 127 means unknown.
    package var rssi: Int8
    package var flags: UInt32
    /// Advertising data followed by scan response data (EIR format = AD structures).
    package var eir: [UInt8]
}

/// Events the backend acts on; anything else is kept as `.other`.
package enum MgmtEvent: Equatable, Sendable {
    case commandComplete(opcode: UInt16, status: MgmtStatus, returnParameters: [UInt8])
    case commandStatus(opcode: UInt16, status: MgmtStatus)
    case indexAdded
    case indexRemoved
    case newSettings(ControllerSettings)
    case deviceFound(DeviceFound)
    case discovering(addressTypes: UInt8, active: Bool)
    case advertisingAdded(instance: UInt8)
    case advertisingRemoved(instance: UInt8)
    /// Adv Monitor Device Found: a monitor handle, then the Device Found layout.
    case advertisementMonitorDeviceFound(handle: UInt16, DeviceFound)
    case other(code: UInt16, parameters: [UInt8])

    package init(_ packet: MgmtPacket) throws(MgmtError) {
        var r = Reader(packet.parameters, context: "event 0x" + String(packet.code, radix: 16))
        switch packet.code {
        case 0x0001:
            let opcode = try r.u16("opcode")
            self = .commandComplete(opcode: opcode, status: MgmtStatus(rawValue: try r.u8("status")), returnParameters: r.rest())
        case 0x0002:
            self = .commandStatus(opcode: try r.u16("opcode"), status: MgmtStatus(rawValue: try r.u8("status")))
        case 0x0004: self = .indexAdded
        case 0x0005: self = .indexRemoved
        case 0x0006: self = .newSettings(ControllerSettings(rawValue: try r.u32("settings")))
        case 0x0012: self = .deviceFound(try Self.deviceFound(&r))
        case 0x0013:
            self = .discovering(addressTypes: try r.u8("address_type"), active: try r.u8("discovering") != 0)
        case 0x0023: self = .advertisingAdded(instance: try r.u8("instance"))
        case 0x0024: self = .advertisingRemoved(instance: try r.u8("instance"))
        case 0x002F:
            let handle = try r.u16("monitor_handle")
            self = .advertisementMonitorDeviceFound(handle: handle, try Self.deviceFound(&r))
        default:
            self = .other(code: packet.code, parameters: packet.parameters)
        }
        switch self {
        case .commandComplete, .other: return  // return parameters / unparsed: taken whole
        default:
            guard r.remaining == 0 else {
                throw .lengthMismatch(
                    what: "event 0x" + String(packet.code, radix: 16), declared: packet.parameters.count - r.remaining,
                    actual: packet.parameters.count)
            }
        }
    }

    private static func deviceFound(_ r: inout Reader) throws(MgmtError) -> DeviceFound {
        let address = Array(try r.take(6, "address"))
        let rawType = try r.u8("address_type")
        guard let type = MgmtAddressType(rawValue: rawType) else { throw .unexpected("unknown address type \(rawType)") }
        let rssi = Int8(bitPattern: try r.u8("rssi"))
        let flags = try r.u32("flags")
        let length = Int(try r.u16("eir_length"))
        let eir = Array(try r.take(length, "eir"))
        return DeviceFound(address: address, addressType: type, rssi: rssi, flags: flags, eir: eir)
    }
}

/// Read Controller Information return parameters.
package struct ControllerInfo: Equatable, Sendable {
    package var address: [UInt8]
    package var bluetoothVersion: UInt8
    package var manufacturer: UInt16
    package var supportedSettings: ControllerSettings
    package var currentSettings: ControllerSettings
    package var name: String

    package init(returnParameters: [UInt8]) throws(MgmtError) {
        var r = Reader(returnParameters, context: "controller info")
        address = Array(try r.take(6, "address"))
        bluetoothVersion = try r.u8("bluetooth_version")
        manufacturer = try r.u16("manufacturer")
        supportedSettings = ControllerSettings(rawValue: try r.u32("supported_settings"))
        currentSettings = ControllerSettings(rawValue: try r.u32("current_settings"))
        _ = try r.take(3, "class_of_device")
        let name = try r.take(249, "name")
        self.name = String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
        _ = try r.take(11, "short_name")
    }
}

/// Read Advertising Features return parameters.
package struct AdvertisingFeatures: Equatable, Sendable {
    package var supportedFlags: AdvertisingFlags
    package var maxDataLength: UInt8
    package var maxScanResponseLength: UInt8
    package var maxInstances: UInt8
    package var instances: [UInt8]

    /// The highest instance no one uses now (bluetoothd allocates from 1 upward), or nil when
    /// every one is taken.
    package func freeInstance() -> UInt8? {
        guard maxInstances > 0 else { return nil }
        return (1...maxInstances).reversed().first { !instances.contains($0) }
    }

    package init(returnParameters: [UInt8]) throws(MgmtError) {
        var r = Reader(returnParameters, context: "advertising features")
        supportedFlags = AdvertisingFlags(rawValue: try r.u32("supported_flags"))
        maxDataLength = try r.u8("max_adv_data_len")
        maxScanResponseLength = try r.u8("max_scan_rsp_len")
        maxInstances = try r.u8("max_instances")
        let count = Int(try r.u8("num_instances"))
        instances = Array(try r.take(count, "instances"))
    }

    /// Whether to use mgmt's extended advertising interface: the controller has LE extended
    /// advertising (the kernel offers the secondary PHYs only then) and the kernel takes
    /// interval and timeout in Add Extended Advertising Parameters (5.10 and later).
    package var offersExtendedAdvertising: Bool {
        supportedFlags.isSuperset(of: [.secondaryLE1M, .parameterTimeout, .parameterIntervals])
    }
}

/// Add Extended Advertising Parameters return parameters: what the kernel granted the instance.
package struct ExtendedAdvertisingGrant: Equatable, Sendable {
    package var instance: UInt8
    /// The TX power the controller selected (dBm; 127 when it did not say).
    package var txPower: Int8
    package var maxDataLength: UInt8
    package var maxScanResponseLength: UInt8

    package init(instance: UInt8, txPower: Int8, maxDataLength: UInt8, maxScanResponseLength: UInt8) {
        self.instance = instance
        self.txPower = txPower
        self.maxDataLength = maxDataLength
        self.maxScanResponseLength = maxScanResponseLength
    }

    package init(returnParameters: [UInt8]) throws(MgmtError) {
        var r = Reader(returnParameters, context: "extended advertising parameters")
        instance = try r.u8("instance")
        txPower = Int8(bitPattern: try r.u8("tx_power"))
        maxDataLength = try r.u8("max_adv_data_len")
        maxScanResponseLength = try r.u8("max_scan_rsp_len")
    }
}

/// Read Controller Index List return parameters.
package func controllerIndexes(returnParameters: [UInt8]) throws(MgmtError) -> [UInt16] {
    var r = Reader(returnParameters, context: "index list")
    let count = Int(try r.u16("num_controllers"))
    var indexes: [UInt16] = []
    for _ in 0..<count { indexes.append(try r.u16("index")) }
    return indexes
}
