import Testing
import UCI

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
