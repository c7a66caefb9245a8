/// The properties octet of a characteristic declaration (Core Specification Vol 3 Part G
/// §3.3.1.1): what a client may do with the value. The server enforces the same set, so a
/// client that ignores the octet gets the errors §3.4 names rather than a different behaviour.
package struct GATTCharacteristicProperties: OptionSet, Hashable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let broadcast = Self(rawValue: 0x01)
    package static let read = Self(rawValue: 0x02)
    package static let writeWithoutResponse = Self(rawValue: 0x04)
    package static let write = Self(rawValue: 0x08)
    package static let notify = Self(rawValue: 0x10)
    package static let indicate = Self(rawValue: 0x20)

    /// BlueZ's `GattCharacteristic1.Flags` for the same set, for a D-Bus backend
    /// (doc/org.bluez.GattCharacteristic.rst); `encryptRead` adds `encrypt-read`.
    package func bluezFlags(encryptRead: Bool = false) -> [String] {
        var flags: [String] = []
        if contains(.broadcast) { flags.append("broadcast") }
        if contains(.read) { flags.append(encryptRead ? "encrypt-read" : "read") }
        if contains(.writeWithoutResponse) { flags.append("write-without-response") }
        if contains(.write) { flags.append("write") }
        if contains(.notify) { flags.append("notify") }
        if contains(.indicate) { flags.append("indicate") }
        return flags
    }
}
