/// SESSION_INFO_NTF (GID 2, OID 0), the range data notification.
///
/// Header fields, then measurements at payload offset 25 (uci.md §1.5). Bytes after the
/// measurements are vendor data. The 8 reserved header octets (HUS primary session ID in
/// UCI 2.0) are written as zero.
package struct RangeData: Hashable, Sendable {
    package var sequenceNumber: UInt32
    /// Session ID (1.x) or handle (2.0).
    package var session: UInt32
    package var rcrIndicator: UInt8
    /// pica always reports 0 here.
    package var rangingIntervalMilliseconds: UInt32
    package var measurementType: MeasurementType
    /// Modes 1 and 2 both mean 8-octet addresses in the measurements.
    package var macAddressMode: MacAddressMode
    package var measurements: TwoWayMeasurements
    package var vendorData: [UInt8]

    package init(
        sequenceNumber: UInt32, session: UInt32, rcrIndicator: UInt8 = 0, rangingIntervalMilliseconds: UInt32,
        measurementType: MeasurementType = .twoWay, macAddressMode: MacAddressMode = .short,
        measurements: [TwoWayMeasurement], vendorData: [UInt8] = []
    ) {
        self.sequenceNumber = sequenceNumber
        self.session = session
        self.rcrIndicator = rcrIndicator
        self.rangingIntervalMilliseconds = rangingIntervalMilliseconds
        self.measurementType = measurementType
        self.macAddressMode = macAddressMode
        self.measurements = TwoWayMeasurements(measurements)
        self.vendorData = vendorData
    }

    static let headerSize = 25

    init(payload: [UInt8]) throws(UCIError) {
        let name = "SESSION_INFO_NTF"
        guard payload.count >= Self.headerSize else {
            throw .truncated(what: name, needed: Self.headerSize, available: payload.count)
        }
        var r = ByteReader(payload, context: name)
        sequenceNumber = try r.u32("sequence_number")
        session = try r.u32("session_token")
        rcrIndicator = try r.u8("rcr_indicator")
        rangingIntervalMilliseconds = try r.u32("current_ranging_interval")
        let rawType = try r.u8("measurement_type")
        guard let type = MeasurementType(rawValue: rawType), type == .twoWay else {
            throw .invalidValue(field: "measurement_type", value: UInt64(rawType))
        }
        measurementType = type
        _ = try r.u8("rfu")
        let rawMode = try r.u8("mac_address_mode")
        guard let mode = MacAddressMode(rawValue: rawMode) else {
            throw .invalidValue(field: "mac_address_mode", value: UInt64(rawMode))
        }
        macAddressMode = mode
        try r.skip(8, "rfu")
        let count = Int(try r.u8("measurement count"))
        let needed = count * TwoWayMeasurement.recordSize
        guard r.remaining >= needed else {
            throw .truncated(what: "\(name) measurements", needed: needed, available: r.remaining)
        }
        measurements = []
        for _ in 0..<count {
            measurements.append(try TwoWayMeasurement(from: &r, addressSize: mode.addressSize))
        }
        vendorData = r.rest()
    }

    var payload: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLE(sequenceNumber)
        bytes.appendLE(session)
        bytes.append(rcrIndicator)
        bytes.appendLE(rangingIntervalMilliseconds)
        bytes += [measurementType.rawValue, 0, macAddressMode.rawValue]
        bytes += [UInt8](repeating: 0, count: 8)
        bytes.append(count: measurements.count, of: "measurement list")
        for measurement in measurements { measurement.encode(into: &bytes, mode: macAddressMode) }
        return bytes + vendorData
    }
}
