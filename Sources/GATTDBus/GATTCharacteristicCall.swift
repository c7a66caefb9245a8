import GATTServer

/// ReadValue and WriteValue on one characteristic, checked as BlueZ's GATT API describes them
/// (doc/org.bluez.GattCharacteristic.rst): what the characteristic's properties allow, the
/// `offset` and `type` options, the value's length. Pure; bluetoothd itself enforces encryption
/// for `encrypt-read` before it calls.
enum GATTCharacteristicCall {
    /// The value ReadValue answers: the characteristic's value from the `offset` option on.
    static func read(_ characteristic: GATTCharacteristic, options: [String: BusValue]) throws(GATTDBusCallError) -> [UInt8] {
        guard characteristic.properties.contains(.read) else {
            throw .refused("org.bluez.Error.NotPermitted", "\(characteristic.uuid) is not readable")
        }
        let offset = Int(options.uint16("offset") ?? 0)
        guard offset <= characteristic.value.count else {
            throw .refused("org.bluez.Error.InvalidOffset", "offset \(offset) beyond the \(characteristic.value.count)-octet value")
        }
        return Array(characteristic.value[offset...])
    }

    /// Whether WriteValue's write had a response (`type` "request" or "reliable") or not
    /// ("command"); bluetoothd versions that send no `type` get whichever the characteristic
    /// allows, with a response if it allows both. The rig's characteristics take whole values
    /// (offset 0) of at most their maximum length.
    static func write(_ characteristic: GATTCharacteristic, value: [UInt8], options: [String: BusValue]) throws(GATTDBusCallError) -> Bool {
        let properties = characteristic.properties
        let withResponse: Bool
        switch options.string("type") {
        case "command"?: withResponse = false
        case nil: withResponse = properties.contains(.write)
        default: withResponse = true
        }
        guard properties.contains(withResponse ? .write : .writeWithoutResponse) else {
            throw .refused("org.bluez.Error.NotPermitted", "\(characteristic.uuid) takes no write \(withResponse ? "with" : "without") response")
        }
        let offset = options.uint16("offset") ?? 0
        guard offset == 0 else {
            throw .refused("org.bluez.Error.InvalidOffset", "\(characteristic.uuid) takes whole values (offset \(offset))")
        }
        guard value.count <= characteristic.maximumLength else {
            throw .refused(
                "org.bluez.Error.InvalidValueLength", "\(value.count) octets for \(characteristic.uuid), at most \(characteristic.maximumLength)")
        }
        return withResponse
    }
}

extension [String: BusValue] {
    func uint16(_ key: String) -> UInt16? {
        if case .uint16(let number)? = self[key] { number } else { nil }
    }

    func objectPath(_ key: String) -> String? {
        if case .objectPath(let path)? = self[key] { path } else { nil }
    }

    func string(_ key: String) -> String? {
        if case .string(let text)? = self[key] { text } else { nil }
    }
}
