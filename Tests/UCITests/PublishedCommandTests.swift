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
