/// One two-way ranging result for one peer.
package struct TwoWayMeasurement: Hashable, Sendable {
    package var address: MacAddress
    package var status: StatusCode
    package var lineOfSight: LineOfSight
    package var distanceCentimetres: UInt16
    package var azimuth: AngleMeasurement
    package var elevation: AngleMeasurement
    /// The peer's own AoA measurement, reported back to us.
    package var destinationAzimuth: AngleMeasurement
    package var destinationElevation: AngleMeasurement
    package var slotIndex: UInt8
    /// UCI 2.0: the received level as a Q7.1 magnitude of negative dBm (0 = not reported).
    package var rssi: UInt8

    /// The received level in dBm, or nil when the board did not report one: 0 (the field's
    /// value when RSSI reporting is off) or 0xFF (−127.5 dBm, below any receiver's sensitivity;
    /// what pica sends).
    package var rssiDBm: Double? {
        rssi == 0 || rssi == 0xFF ? nil : -Double(rssi) / 2
    }

    package init(
        address: MacAddress, status: StatusCode, lineOfSight: LineOfSight, distanceCentimetres: UInt16,
        azimuth: AngleMeasurement = AngleMeasurement(rawQ9_7: 0, figureOfMerit: 0),
        elevation: AngleMeasurement = AngleMeasurement(rawQ9_7: 0, figureOfMerit: 0),
        destinationAzimuth: AngleMeasurement = AngleMeasurement(rawQ9_7: 0, figureOfMerit: 0),
        destinationElevation: AngleMeasurement = AngleMeasurement(rawQ9_7: 0, figureOfMerit: 0),
        slotIndex: UInt8 = 0, rssi: UInt8 = 0
    ) {
        self.address = address
        self.status = status
        self.lineOfSight = lineOfSight
        self.distanceCentimetres = distanceCentimetres
        self.azimuth = azimuth
        self.elevation = elevation
        self.destinationAzimuth = destinationAzimuth
        self.destinationElevation = destinationElevation
        self.slotIndex = slotIndex
        self.rssi = rssi
    }

    /// Every TWR record is 31 octets; the RFU tail absorbs the address size difference.
    static let recordSize = 31
    /// Octets from status through RSSI, between the address and the RFU tail.
    private static let fieldsSize = 18

    init(from r: inout ByteReader, addressSize: Int) throws(UCIError) {
        // Read as a little-endian number (octets least significant first), not copied out.
        let value = try r.uint(addressSize, "mac_address")
        address = addressSize == 2 ? .short(UInt16(truncatingIfNeeded: value)) : .extended(value)
        status = StatusCode(rawValue: try r.u8("status"))
        lineOfSight = LineOfSight(rawValue: try r.u8("nlos"))
        distanceCentimetres = try r.u16("distance")
        // Both field names spelt out: building "…_fom" for every reading cost more than reading it.
        func angle(_ field: String, _ fomField: String) throws(UCIError) -> AngleMeasurement {
            let raw = Int16(bitPattern: try r.u16(field))
            return AngleMeasurement(rawQ9_7: raw, figureOfMerit: try r.u8(fomField))
        }
        azimuth = try angle("aoa_azimuth", "aoa_azimuth_fom")
        elevation = try angle("aoa_elevation", "aoa_elevation_fom")
        destinationAzimuth = try angle("aoa_destination_azimuth", "aoa_destination_azimuth_fom")
        destinationElevation = try angle("aoa_destination_elevation", "aoa_destination_elevation_fom")
        slotIndex = try r.u8("slot_index")
        rssi = try r.u8("rssi")
        try r.skip(Self.recordSize - Self.fieldsSize - addressSize, "rfu")
    }

    func encode(into bytes: inout [UInt8], mode: MacAddressMode) {
        let octets = address.octets
        precondition(octets.count == mode.addressSize, "measurement address does not match the MAC address mode")
        bytes += octets
        bytes += [status.rawValue, lineOfSight.rawValue]
        bytes.appendLE(distanceCentimetres)
        for angle in [azimuth, elevation, destinationAzimuth, destinationElevation] {
            bytes.appendLE(UInt16(bitPattern: angle.rawQ9_7))
            bytes.append(angle.figureOfMerit)
        }
        bytes += [slotIndex, rssi]
        bytes += [UInt8](repeating: 0, count: Self.recordSize - Self.fieldsSize - octets.count)
    }
}
