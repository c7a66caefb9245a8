import Testing
import UCI

// Byte-exact vectors from published sources. Where a vector comes from a pdl `test` block
// (google/pica:src/uci_packets.pdl, AOSP GrapheneOS/platform_packages_modules_Uwb:
// src/rust/uwb_uci_packets/uci_packets.pdl), it is written there with AOSP's internal
// unfragmented header (3 octets + 32-bit length); converted to the 4-octet wire header
// here as uci.md §1.2 explains, payload octets unchanged.

@Suite("Commands: published bytes")
struct PublishedCommandTests {
    @Test func coreCommands() throws {
        // pica pdl `test CoreGetDeviceInfoCmd`; Qorvo Client.get_device_info sends an empty payload
        // (sasodoma/uwb-ranging:new_python_script/uci/fira.py).
        try checkCommand(.getDeviceInfo, "20 02 00 00")
        // pica pdl `test CoreDeviceResetCmd`; Qorvo Client.reset sends b"\x00" (same fira.py).
        try checkCommand(.deviceReset, "20 00 00 01 00")
        // pica pdl `test CoreGetCapsInfoCmd`.
        try checkCommand(.getCapsInfo, "20 03 00 00")
    }

    /// AOSP `uci_packets.pdl`: AndroidSetCountryCodeCmd is GID VENDOR_ANDROID (0xC), OID 0x1,
    /// two octets of country code; Qorvo's UCI headers number the OID the same
    /// (UCI_OID_ANDROID_SET_COUNTRY_CODE_CMD_RSP = 0x01). Its response is a status.
    @Test func androidSetCountryCode() throws {
        try checkCommand(.androidSetCountryCode("DE"), "2c 01 00 02 44 45")
        try checkResponse(.androidSetCountryCode(.ok), "4c 01 00 01 00")
        #expect(throws: UCIError.self) { try UCICommand(decodeWire(bytes("2c 01 00 02 64 65"))) }  // lower case: not a code
    }

    @Test func sessionCommandsFromPicaPdl() throws {
        // pica pdl tests SessionInitCmd, SessionDeinitCmd, SessionSetAppConfigCmd,
        // SessionGetAppConfigCmd, SessionStartCmd, SessionStopCmd.
        try checkCommand(.sessionInit(sessionID: 0x0403_0201, type: .rangingAndInBandData), "21 00 00 05 01 02 03 04 01")
        try checkCommand(.sessionDeinit(session: 0x0403_0201), "21 01 00 04 01 02 03 04")
        try checkCommand(.setAppConfig(session: 0x0403_0201, []), "21 03 00 05 01 02 03 04 00")
        try checkCommand(.getAppConfig(session: 0x0403_0201, []), "21 04 00 05 01 02 03 04 00")
        try checkCommand(.sessionStart(session: 0x0302_0100), "22 00 00 04 00 01 02 03")
        try checkCommand(.sessionStop(session: 0x0403_0200), "22 01 00 04 00 02 03 04")
    }

    @Test func sessionLifecycleAsRunFiraTwrSendsIt() throws {
        // sasodoma/uwb-ranging:new_python_script/run_fira_twr.py defaults to session "42" and
        // SessionType.Ranging; fira.py Client.session_init/ranging_start/ranging_stop/session_deinit
        // write the ID as 4 octets little-endian (session_init adds the type octet).
        try checkCommand(.sessionInit(sessionID: 42, type: .fiRaRanging), "21 00 00 05 2a 00 00 00 00")
        try checkCommand(.sessionStart(session: 42), "22 00 00 04 2a 00 00 00")
        try checkCommand(.sessionStop(session: 42), "22 01 00 04 2a 00 00 00")
        try checkCommand(.sessionDeinit(session: 42), "21 01 00 04 2a 00 00 00")
    }

    /// The full SET_APP_CONFIG run_fira_twr.py sends as controller with the README's
    /// `--mac 00:00 --dest-mac 5F:DD`. Expected bytes were produced by running Qorvo's own
    /// encoder (`core.tvs_to_bytes(App.defs, ...)` in sasodoma/uwb-ranging:new_python_script/uci)
    /// over the script's default app_configs list, in the script's order.
    static let runFiraTwrSetAppConfig = """
        21 03 00 6a 2a 00 00 00 1b 00 01 01 11 01 01 03 01 00 01 01 02 06 02 00 00 04 01 09
        22 01 01 02 01 00 12 01 03 2e 01 0b 27 02 08 07 28 06 01 02 03 04 05 06 0d 01 01
        2b 08 00 00 00 00 00 00 00 00 14 01 09 15 01 02 08 02 60 09 09 04 78 00 00 00 1b 01 06
        32 02 00 00 2c 01 01 13 01 01 2d 01 00 05 01 01 07 02 5f dd 24 01 00 35 01 01
        """

    static let runFiraTwrConfig: [AppConfigTLV] = [
        .deviceType(.controller),
        .deviceRole(.initiator),
        .multiNodeMode(.unicast),
        .rangingRoundUsage(.dsTwrDeferred),
        .deviceMacAddress(.short(0x0000)),
        .channel(9),
        .scheduleMode(1),  // time scheduled
        .stsConfig(.staticSTS),
        .rframeConfig(3),  // SP3
        .resultReportConfig(0x0B),  // tof | azimuth | fom
        .vendorID(0x0708),
        .staticSTSIV([0x01, 0x02, 0x03, 0x04, 0x05, 0x06]),
        .aoaResultRequest(1),
        // Qorvo's UCI 2.0 tooling declares UWB_INITIATION_TIME as 8 octets (fira_app.py App.defs);
        // the typed constructor follows the 1.x 4-octet table, so the raw form is used here.
        AppConfigTLV(id: .uwbInitiationTime, value: [0, 0, 0, 0, 0, 0, 0, 0]),
        .preambleCodeIndex(9),
        .sfdID(2),
        .slotDuration(rstu: 2400),
        .rangingDuration(milliseconds: 120),
        .slotsPerRangingRound(6),
        AppConfigTLV(id: .maxNumberOfMeasurements, value: [0, 0]),
        .hoppingMode(1),
        AppConfigTLV(id: .rssiReporting, value: [1]),
        AppConfigTLV(id: AppConfigID(rawValue: 0x2D), value: [0]),  // BLOCK_STRIDE_LENGTH
        .numberOfControlees(1),
        .dstMacAddresses([.short(0xDD5F)]),  // phone address "5F:DD"
        AppConfigTLV(id: .keyRotationRate, value: [0]),
        AppConfigTLV(id: .stsLength, value: [1]),
    ]

    @Test func setAppConfigAsRunFiraTwrSendsIt() throws {
        try checkCommand(.setAppConfig(session: 42, Self.runFiraTwrConfig), Self.runFiraTwrSetAppConfig)
    }

    @Test func virtualDeviceReadsTypedValuesBack() throws {
        guard case let .setAppConfig(session, tlvs) = try UCICommand(decodeWire(bytes(Self.runFiraTwrSetAppConfig))) else {
            Issue.record("not a SET_APP_CONFIG")
            return
        }
        #expect(session == 42)
        let byID = Dictionary(tlvs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byID[.slotDuration]?.uint16 == 2400)
        #expect(byID[.rangingDuration]?.uint32 == 120)
        #expect(byID[.channelNumber]?.uint8 == 9)
        #expect(byID[.channelNumber]?.uint16 == nil)
        #expect(byID[.vendorID]?.uint16 == 0x0708)
        let peers = try #require(byID[.dstMacAddress]?.macAddresses(mode: .short))
        #expect(peers == [.short(0xDD5F)])
        #expect(peers.map(\.description) == ["5F:DD"])
        #expect(byID[.deviceMacAddress]?.macAddresses(mode: .short) == [.short(0)])
    }

    @Test func multicastListUpdateFromAospTests() throws {
        // AOSP GrapheneOS/platform_packages_modules_Uwb:src/rust/uwb_uci_packets/src/lib.rs
        // test_build_multicast_update_packet: real 4-octet wire header. short_address [0x12, 0x34].
        try checkCommand(
            .updateControllerMulticastList(
                session: 0x1425_3647, action: .add,
                [Controlee(shortAddress: 0x3412, subSessionID: 0x1324_3546)]),
            "21 07 00 0c 47 36 25 14 00 01 12 34 46 35 24 13")
        // Same file, test_build_multicast_update_packet_v2_short_session_key.
        let key16 = bytes("12 34 56 78 90 ab cd ef 12 34 56 78 90 ab cd ef")
        try checkCommand(
            .updateControllerMulticastList(
                session: 0x1425_3647, action: .addWith16ByteSubSessionKey,
                [Controlee(shortAddress: 0x3412, subSessionID: 0x1324_3546, subSessionKey: key16)]),
            "21 07 00 1c 47 36 25 14 02 01 12 34 46 35 24 13 12 34 56 78 90 ab cd ef 12 34 56 78 90 ab cd ef")
        // Same file, test_build_multicast_update_packet_v2_long_session_key.
        try checkCommand(
            .updateControllerMulticastList(
                session: 0x1425_3647, action: .addWith32ByteSubSessionKey,
                [Controlee(shortAddress: 0x3412, subSessionID: 0x1324_3546, subSessionKey: key16 + key16)]),
            "21 07 00 2c 47 36 25 14 03 01 12 34 46 35 24 13 "
                + "12 34 56 78 90 ab cd ef 12 34 56 78 90 ab cd ef 12 34 56 78 90 ab cd ef 12 34 56 78 90 ab cd ef")
    }
}

@Suite("Responses: published bytes")
struct PublishedResponseTests {
    @Test func picaPdlResponses() throws {
        // pica pdl tests CoreDeviceResetRsp, SessionInitRsp, SessionDeinitRsp, SessionSetAppConfigRsp,
        // SessionGetAppConfigRsp, SessionUpdateControllerMulticastListRsp, SessionStartRsp, SessionStopRsp.
        try checkResponse(.deviceReset(.ok), "40 00 00 01 00")
        try checkResponse(.sessionInit(.sessionNotExist, sessionHandle: nil), "41 00 00 01 11")
        try checkResponse(.sessionDeinit(.ok), "41 01 00 01 00")
        try checkResponse(.setAppConfig(.rejected, [AppConfigStatus(id: .rangingRoundUsage, status: .ok)]), "41 03 00 04 01 01 01 00")
        try checkResponse(.getAppConfig(.rejected, []), "41 04 00 02 01 00")
        try checkResponse(.updateControllerMulticastList(.ok, []), "41 07 00 01 00")
        try checkResponse(.sessionStart(.ok), "42 00 00 01 00")
        try checkResponse(.sessionStop(.ok), "42 01 00 01 00")
    }

    @Test func picaPdlDeviceInfoAndCaps() throws {
        // pica pdl `test CoreGetDeviceInfoRsp`: status REJECTED with the full layout, versions as u16
        // 0x0001..0x0004 (octets 01 00, 02 00, ...), one vendor octet 0x0a.
        let version = { (major: UInt8) in UCIVersion(major: major, minor: 0, maintenance: 0) }
        try checkResponse(
            .deviceInfo(.rejected, DeviceInfo(
                uciVersion: version(1), macVersion: version(2), phyVersion: version(3),
                uciTestVersion: version(4), vendorData: [0x0A])),
            "40 02 00 0b 01 01 00 02 00 03 00 04 00 01 0a")
        // pica pdl `test CoreGetCapsInfoRsp`.
        try checkResponse(.capsInfo(.ok, [CapabilityTLV(type: 0x00, value: [0x01])]), "40 03 00 05 00 01 00 01 01")
    }

    @Test func sessionInitV2CarriesHandle() throws {
        // pica pdl `test SessionInitRsp_V2`: payload 11 00 00 00 01 (status, handle LE). The pdl
        // vector's length field says 1, which disagrees with its 5 payload octets; the wire
        // header here carries the real length 5.
        try checkResponse(.sessionInit(.sessionNotExist, sessionHandle: 0x0100_0000), "41 00 00 05 11 00 00 00 01")
    }

    @Test func deviceInfoAsPicaSendsIt() throws {
        // Constructed from google/pica:src/device.rs: UCI_VERSION 0x0002, MAC/PHY 0x3001,
        // TEST 0x1001, written little-endian, empty vendor info; status OK.
        let wire = "40 02 00 0a 00 02 00 01 30 01 30 01 10 00"
        let info = DeviceInfo(
            uciVersion: UCIVersion(major: 2, minor: 0, maintenance: 0),
            macVersion: UCIVersion(major: 1, minor: 3, maintenance: 0),
            phyVersion: UCIVersion(major: 1, minor: 3, maintenance: 0),
            uciTestVersion: UCIVersion(major: 1, minor: 1, maintenance: 0),
            vendorData: [])
        try checkResponse(.deviceInfo(.ok, info), wire)
        #expect(info.uciVersion.description == "2.0.0")
        #expect(info.macVersion.description == "1.3.0")
    }

    @Test func statusOnlyReplies() throws {
        // A failed GET_DEVICE_INFO carries only its status (AOSP handles these as status-only
        // replies); so does a SYNTAX_ERROR answer to a vendor command (GID 0xE).
        try checkResponse(.statusOnly(groupID: 0x0, opcodeID: 0x02, .failed), "40 02 00 01 02")
        try checkResponse(.statusOnly(groupID: 0xE, opcodeID: 0x05, .syntaxError), "4e 05 00 01 03")
        let reply = UCIResponse.statusOnly(groupID: 0x1, opcodeID: 0x03, .invalidParam)
        #expect(reply.groupID == 1 && reply.opcodeID == 3 && reply.status == .invalidParam)
        // A status-only layout stays its own case: UCI 1.x SESSION_INIT_RSP.
        try checkResponse(.sessionInit(.rejected, sessionHandle: nil), "41 00 00 01 01")
    }

    @Test func multicastResponseV2() throws {
        // UCI 2.0 layout (uci.md §1.8; AOSP pdl SessionUpdateControllerMulticastListRspV2Payload):
        // status, n, [mac(2), status]. Constructed: one controlee 0x3412 refused with 7 (address not found).
        try checkResponse(
            .updateControllerMulticastList(.failed, [ControleeStatus(shortAddress: 0x3412, status: 7)]),
            "41 07 00 05 02 01 12 34 07")
        // A 2.0 reply with an empty list decodes to the same value as a 1.x status-only reply.
        #expect(try UCIResponse(decodeWire(bytes("41 07 00 02 00 00"))) == .updateControllerMulticastList(.ok, []))
    }
}

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

@Suite("Multicast list notification: published bytes")
struct MulticastListNotificationTests {
    @Test func uci1LayoutFromPicaPdl() throws {
        // pica pdl `test SessionUpdateControllerMulticastListNtf` (the 1.x layout): session token
        // 0x03020100, remaining_multicast_list_size 4, no controlee statuses.
        try checkNotification(
            .multicastListUpdate(MulticastListUpdate(session: 0x0302_0100, remainingListSize: 4, controlees: [])),
            "61 07 00 06 00 01 02 03 04 00")
    }

    /// AOSP uwb_core `params/uci_packets.rs` tests
    /// `test_session_notification_casting_from_session_update_controller_multicast_list_ntf_v1_packet`
    /// and `..._v2_packet`: session token 0x32; controlees with MAC octets 0c a8 (status 0, OK;
    /// 1.x sub-session 0x30) and 0c a9 (status 2, key fetch failed; 1.x sub-session 0x31). The
    /// bytes follow the payload writers in that test module: V2 = n, [mac, status]; V1 =
    /// remaining, n, [mac, subsession u32 LE, status].
    @Test func bothLayoutsFromAospTests() throws {
        try checkNotification(
            .multicastListUpdate(
                MulticastListUpdate(
                    session: 0x32, remainingListSize: nil,
                    controlees: [
                        ControleeStatus(shortAddress: 0xA80C, status: MulticastUpdateStatus.ok),
                        ControleeStatus(shortAddress: 0xA90C, status: MulticastUpdateStatus.keyFetchFailed),
                    ])),
            "61 07 00 0b 32 00 00 00 02 0c a8 00 0c a9 02")
        try checkNotification(
            .multicastListUpdate(
                MulticastListUpdate(
                    session: 0x32, remainingListSize: 2,
                    controlees: [
                        ControleeStatus(shortAddress: 0xA80C, subSessionID: 0x30, status: MulticastUpdateStatus.ok),
                        ControleeStatus(shortAddress: 0xA90C, subSessionID: 0x31, status: MulticastUpdateStatus.keyFetchFailed),
                    ])),
            "61 07 00 14 32 00 00 00 02 02 0c a8 30 00 00 00 00 0c a9 31 00 00 00 02")
    }

    @Test func payloadThatFitsNeitherLayoutIsRejected() throws {
        // Claims two 2.0 entries (6 octets) but carries one.
        #expect(throws: UCIError.self) {
            try UCINotification(decodeWire(bytes("61 07 00 08 32 00 00 00 02 0c a8 00")))
        }
    }
}
