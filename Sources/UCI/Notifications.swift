/// SESSION_INFO_NTF ranging_measurement_type. Only two-way ranging is decoded in full.
package enum MeasurementType: UInt8, Sendable {
    case oneWay = 0, twoWay = 1, downlinkTDoA = 2, owrAoA = 3
}

/// The NLoS octet: 0 line of sight, 1 non-line of sight, anything else (0xFF) unknown.
package enum LineOfSight: Hashable, Sendable {
    case lineOfSight, nonLineOfSight, unknown(UInt8)

    init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .lineOfSight
        case 1: self = .nonLineOfSight
        default: self = .unknown(rawValue)
        }
    }

    var rawValue: UInt8 {
        switch self {
        case .lineOfSight: 0
        case .nonLineOfSight: 1
        case .unknown(let value): value
        }
    }
}

/// Q9.7 signed fixed-point degrees plus figure of merit (0-100).
///
/// Kept raw so re-encoding is lossless; `degrees` divides the two's complement by 128 as Android does.
package struct AngleMeasurement: Hashable, Sendable {
    package var rawQ9_7: Int16
    package var figureOfMerit: UInt8

    package var degrees: Double { Double(rawQ9_7) / 128 }

    package init(rawQ9_7: Int16, figureOfMerit: UInt8) {
        self.rawQ9_7 = rawQ9_7
        self.figureOfMerit = figureOfMerit
    }

    /// Rounds to the nearest 1/128 degree, clamping to the Q9.7 range (NaN becomes 0).
    package init(degrees: Double, figureOfMerit: UInt8) {
        let scaled = (degrees * 128).rounded()
        self.init(
            rawQ9_7: scaled.isNaN ? 0 : Int16(min(max(scaled, Double(Int16.min)), Double(Int16.max))),
            figureOfMerit: figureOfMerit)
    }
}

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
    package var measurements: [TwoWayMeasurement]
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
        self.measurements = measurements
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
        measurements.reserveCapacity(count)
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

/// UWBS-to-host notifications needed for ranging.
package enum UCINotification: Hashable, Sendable {
    /// `60 01 00 01 xx`
    case deviceStatus(DeviceState)
    /// `60 07 00 01 xx`
    case genericError(StatusCode)
    /// `61 02 00 06 ...`
    case sessionStatus(session: UInt32, state: SessionState, reason: ReasonCode)
    /// `61 07 ...`
    case multicastListUpdate(MulticastListUpdate)
    /// `62 00 ...`
    case rangeData(RangeData)

    package var message: UCIMessage {
        let (gid, oid): (UInt8, UInt8)
        var payload: [UInt8] = []
        switch self {
        case let .deviceStatus(state):
            (gid, oid) = (0x0, 0x01)
            payload = [state.rawValue]
        case let .genericError(status):
            (gid, oid) = (0x0, 0x07)
            payload = [status.rawValue]
        case let .sessionStatus(session, state, reason):
            (gid, oid) = (0x1, 0x02)
            payload.appendLE(session)
            payload += [state.rawValue, reason.rawValue]
        case let .multicastListUpdate(update):
            (gid, oid) = (0x1, 0x07)
            payload = update.payload
        case let .rangeData(data):
            (gid, oid) = (0x2, 0x00)
            payload = data.payload
        }
        return UCIMessage(messageType: .notification, groupID: gid, opcodeID: oid, payload: payload)
    }

    /// Non-TWR range data is rejected with `.invalidValue(field: "measurement_type", ...)`.
    package init(_ message: UCIMessage) throws(UCIError) {
        guard message.messageType == .notification else { throw .unexpectedMessageType(message.messageType) }
        let payload = message.payload
        switch (message.groupID, message.opcodeID) {
        case (0x0, 0x01):
            var r = try ByteReader(payload, context: "CORE_DEVICE_STATUS_NTF", exactly: 1)
            let raw = try r.u8("device_state")
            guard let state = DeviceState(rawValue: raw) else {
                throw .invalidValue(field: "device_state", value: UInt64(raw))
            }
            self = .deviceStatus(state)
        case (0x0, 0x07):
            var r = try ByteReader(payload, context: "CORE_GENERIC_ERROR_NTF", exactly: 1)
            self = .genericError(StatusCode(rawValue: try r.u8("status")))
        case (0x1, 0x02):
            var r = try ByteReader(payload, context: "SESSION_STATUS_NTF", exactly: 6)
            let session = try r.u32("session_token")
            let raw = try r.u8("session_state")
            guard let state = SessionState(rawValue: raw) else {
                throw .invalidValue(field: "session_state", value: UInt64(raw))
            }
            self = .sessionStatus(session: session, state: state, reason: ReasonCode(rawValue: try r.u8("reason_code")))
        case (0x1, 0x07):
            self = .multicastListUpdate(try MulticastListUpdate(payload: payload))
        case (0x2, 0x00):
            self = .rangeData(try RangeData(payload: payload))
        case let (gid, oid):
            throw .unknownOpcode(messageType: .notification, groupID: gid, opcodeID: oid)
        }
    }
}
