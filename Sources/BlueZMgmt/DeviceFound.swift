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
