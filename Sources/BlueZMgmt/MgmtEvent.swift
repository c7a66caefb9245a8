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
