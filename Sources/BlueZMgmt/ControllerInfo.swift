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
