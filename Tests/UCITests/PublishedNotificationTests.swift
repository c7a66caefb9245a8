import Testing
import UCI

@Suite("Notifications: published bytes")
struct PublishedNotificationTests {
    @Test func picaPdlNotifications() throws {
        // pica pdl tests CoreDeviceStatusNtf, CoreGenericErrorNtf, SessionStatusNtf (both vectors).
        try checkNotification(.deviceStatus(.ready), "60 01 00 01 01")
        try checkNotification(.genericError(.rejected), "60 07 00 01 01")
        try checkNotification(
            .sessionStatus(session: 0x0403_0201, state: .active, reason: .insufficientSlotsPerRR),
            "61 02 00 06 01 02 03 04 02 21")
        try checkNotification(
            .sessionStatus(session: 0x0403_0201, state: .deinitialized, reason: ReasonCode(rawValue: 0x82)),
            "61 02 00 06 01 02 03 04 01 82")
    }

    @Test func deviceErrorState() throws {
        // DEVICE_STATE_ERROR = 0xff (pica and AOSP pdl DeviceState).
        try checkNotification(.deviceStatus(.error), "60 01 00 01 ff")
    }

    @Test func sessionInfoWithoutMeasurementsFromPicaPdl() throws {
        // pica pdl `test ShortMacTwoWaySessionInfoNtf` and `test ExtendedMacTwoWaySessionInfoNtf`.
        let header = "62 00 00 19 00 02 03 04 05 06 07 08 00 0a 01 01 01 01 00"
        for (mode, octet) in [(MacAddressMode.short, "00"), (.extendedWithShortHeader, "01")] {
            try checkNotification(
                .rangeData(RangeData(
                    sequenceNumber: 0x0403_0200, session: 0x0807_0605, rcrIndicator: 0,
                    rangingIntervalMilliseconds: 0x0101_010A, measurementType: .twoWay, macAddressMode: mode,
                    measurements: [], vendorData: [])),
                "\(header) \(octet) 00 00 00 00 00 00 00 00 00")
        }
    }

    @Test func nonTwoWayMeasurementsAreRejected() throws {
        // pica pdl `test ShortMacOwrAoaSessionInfoNtf` (second vector, one OWR-AoA measurement)
        // and `test ShortMacDlTDoASessionInfoNtf`.
        let owrAoA = "62 00 00 26 00 02 03 04 05 06 07 08 00 0a 01 01 01 03 00 00 00 00 00 00 00 00 00 00 "
            + "01 aa bb 00 00 01 01 00 03 04 60 05 06 50"
        #expect(throws: UCIError.invalidValue(field: "measurement_type", value: 3)) {
            try UCINotification(decodeWire(bytes(owrAoA)))
        }
        let dlTDoA = "62 00 00 19 00 02 03 04 05 06 07 08 00 0a 02 01 01 02 00 00 00 00 00 00 00 00 00 00 00"
        #expect(throws: UCIError.invalidValue(field: "measurement_type", value: 2)) {
            try UCINotification(decodeWire(bytes(dlTDoA)))
        }
    }

    /// Built field by field from the uci.md §1.5 table (pica/AOSP pdl `ShortAddressTwoWayRangingMeasurement`,
    /// Wireshark packet-uci.c dissect_range_data_ntf): constructed, not captured.
    @Test func sessionInfoShortAddressFieldByField() throws {
        let wire = bytes("""
            62 00 00 38
            07 00 00 00
            2a 00 00 00
            00
            78 00 00 00
            01
            00
            00
            00 00 00 00 00 00 00 00
            01
            5f dd
            00
            01
            2c 01
            80 ff
            5a
            00 0b
            32
            00 f5
            1e
            80 00
            28
            02
            b4
            00 00 00 00 00 00 00 00 00 00 00
            """)
        // sequence_number 7 | session 42 | rcr 0 | interval 120 ms | TWR | RFU | short | 8 RFU | 1 measurement
        // mac "5F:DD" | status OK | NLoS | 300 cm | azimuth raw 0xFF80 = -1.0 deg, FOM 90
        // | elevation 0x0B00 = 22.0 deg, FOM 50 | dest azimuth 0xF500 = -22.0 deg, FOM 30
        // | dest elevation 0x0080 = 1.0 deg, FOM 40 | slot 2 | RSSI 0xB4 | 11 RFU
        let measurement = TwoWayMeasurement(
            address: .short(0xDD5F), status: .ok, lineOfSight: .nonLineOfSight, distanceCentimetres: 300,
            azimuth: AngleMeasurement(rawQ9_7: -128, figureOfMerit: 90),
            elevation: AngleMeasurement(degrees: 22, figureOfMerit: 50),
            destinationAzimuth: AngleMeasurement(degrees: -22, figureOfMerit: 30),
            destinationElevation: AngleMeasurement(degrees: 1, figureOfMerit: 40),
            slotIndex: 2, rssi: 0xB4)
        let expected = UCINotification.rangeData(RangeData(
            sequenceNumber: 7, session: 42, rangingIntervalMilliseconds: 120, measurements: [measurement]))
        #expect(expected.message.encoded() == wire)
        let decoded = try UCINotification(decodeWire(wire))
        #expect(decoded == expected)
        guard case let .rangeData(data) = decoded else { return }
        #expect(data.measurements[0].azimuth.degrees == -1.0)
        #expect(data.measurements[0].elevation.degrees == 22.0)
        #expect(data.measurements[0].destinationAzimuth.degrees == -22.0)
        #expect(data.measurements[0].address.description == "5F:DD")
    }

    /// Extended-address record: 8-octet MAC and a 5-octet RFU tail keep it at 31 octets
    /// (pica pdl `ExtendedAddressTwoWayRangingMeasurement`); trailing octets are vendor data
    /// (pdl `vendor_data: 8[]`). Constructed.
    @Test func sessionInfoExtendedAddressFieldByField() throws {
        let wire = bytes("""
            62 00 00 3b
            01 00 00 00  05 00 00 00  00  c8 00 00 00  01  00  02  00 00 00 00 00 00 00 00
            01
            01 02 03 04 05 06 07 08
            21  ff  00 00
            00 00 00  00 00 00  00 00 00  00 00 00
            00  00
            00 00 00 00 00
            ca fe fa
            """)
        let measurement = TwoWayMeasurement(
            address: .extended(0x0807_0605_0403_0201), status: .rangingRxTimeout,
            lineOfSight: .unknown(0xFF), distanceCentimetres: 0)
        let expected = UCINotification.rangeData(RangeData(
            sequenceNumber: 1, session: 5, rangingIntervalMilliseconds: 200, macAddressMode: .extended,
            measurements: [measurement], vendorData: [0xCA, 0xFE, 0xFA]))
        #expect(expected.message.encoded() == wire)
        #expect(try UCINotification(decodeWire(wire)) == expected)
        #expect(measurement.address.description == "01:02:03:04:05:06:07:08")
        #expect(measurement.status.description == "RX_TIMEOUT")
    }
}
