import Testing
import UCI

@testable import AndroidRangingOOB

/// The TLVs config id 1 maps to, written out from AOSP's `ConfigurationManager.java` (id 1:
/// unicast, static STS, DS-TWR deferred, short addresses) and `Utils.java` (id 1: 6 slots per
/// round, hopping), with the configuration's fields from `Octets.uwbConfiguration`.
@Suite struct AndroidSessionConfigurationTests {
    @Test func configID1MapsToTheAOSPPreset() throws {
        let session = try AndroidSessionConfiguration(Octets.uwbConfiguration, deviceAddress: [0xA1, 0xB2])
        #expect(session.sessionID == 0x1234_5678)
        let expected: [(UInt8, [UInt8])] = [
            (0x00, [0x00]),  // DEVICE_TYPE controlee (mode 2)
            (0x01, [0x02]),  // RANGING_ROUND_USAGE DS-TWR deferred
            (0x02, [0x00]),  // STS_CONFIG static
            (0x03, [0x00]),  // MULTI_NODE_MODE unicast
            (0x04, [0x09]),  // CHANNEL_NUMBER 9
            (0x05, [0x01]),  // NO_OF_CONTROLEE 1
            (0x06, [0xA1, 0xB2]),  // DEVICE_MAC_ADDRESS, the rig's
            (0x07, [0xC4, 0xD3]),  // DST_MAC_ADDRESS, the phone's
            (0x08, [0x60, 0x09]),  // SLOT_DURATION 2 ms = 2400 RSTU
            (0x09, [0xF0, 0x00, 0x00, 0x00]),  // RANGING_DURATION 240 ms
            (0x0C, [0x03]),  // RANGING_ROUND_CONTROL
            (0x11, [0x00]),  // DEVICE_ROLE responder (role 2)
            (0x12, [0x03]),  // RFRAME_CONFIG SP3
            (0x14, [0x0A]),  // PREAMBLE_CODE_INDEX 10
            (0x15, [0x02]),  // SFD_ID 2
            (0x1B, [0x06]),  // SLOTS_PER_RR 6
            (0x22, [0x01]),  // SCHEDULE_MODE time-scheduled
            (0x26, [0x00]),  // MAC_ADDRESS_MODE short
            (0x27, [0x08, 0x07]),  // VENDOR_ID, key octets 0-1
            (0x28, [0x01, 0x02, 0x03, 0x04, 0x05, 0x06]),  // STATIC_STS_IV, key octets 2-7
            (0x2C, [0x01]),  // HOPPING_MODE FiRa hopping
        ]
        #expect(session.appConfig.map(\.id.rawValue) == expected.map(\.0))
        #expect(session.appConfig.map(\.value) == expected.map(\.1))
    }

    @Test func roleAndModeFollowTheConfiguration() throws {
        var configuration = Octets.uwbConfiguration
        configuration.role = .initiator
        configuration.mode = .controller
        let session = try AndroidSessionConfiguration(configuration, deviceAddress: [0xA1, 0xB2])
        #expect(session.appConfig.first { $0.id == .deviceType }?.value == [0x01])
        #expect(session.appConfig.first { $0.id == .deviceRole }?.value == [0x01])
    }

    /// Config id 3 (provisioned unicast DS-TWR in the Ranging module's numbering) as AOSP's
    /// ranging/uwb_backend `ConfigurationManager` opens it: id 1's TLVs but STS_CONFIG 3 and,
    /// instead of VENDOR_ID and STATIC_STS_IV, SESSION_KEY with key rotation on at rate 0.
    @Test func configID3MapsToTheProvisionedPreset() throws {
        var provisioned = Octets.uwbConfiguration
        provisioned.configID = 3
        provisioned.sessionKey = Array(0x40...0x4F)
        let session = try AndroidSessionConfiguration(provisioned, deviceAddress: [0xA1, 0xB2])
        let expected: [(UInt8, [UInt8])] = [
            (0x00, [0x00]), (0x01, [0x02]),
            (0x02, [0x03]),  // STS_CONFIG provisioned
            (0x03, [0x00]), (0x04, [0x09]), (0x05, [0x01]), (0x06, [0xA1, 0xB2]), (0x07, [0xC4, 0xD3]), (0x08, [0x60, 0x09]),
            (0x09, [0xF0, 0x00, 0x00, 0x00]), (0x0C, [0x03]), (0x11, [0x00]), (0x12, [0x03]), (0x14, [0x0A]), (0x15, [0x02]),
            (0x1B, [0x06]), (0x22, [0x01]), (0x26, [0x00]),
            (0x45, Array(0x40...0x4F)),  // SESSION_KEY, the configuration's 16 octets
            (0x23, [0x01]),  // KEY_ROTATION on
            (0x24, [0x00]),  // KEY_ROTATION_RATE 0
            (0x2C, [0x01]),
        ]
        #expect(session.appConfig.map(\.id.rawValue) == expected.map(\.0))
        #expect(session.appConfig.map(\.value) == expected.map(\.1))
    }

    /// Each mapped id takes its own key length; other ids are not mapped.
    @Test func onlyIDs1And3WithTheirKeysAreMapped() {
        var configuration = Octets.uwbConfiguration
        configuration.configID = 3
        #expect(throws: RangingConfigurationError.sessionKeyLength(8, supported: [16])) {
            try AndroidSessionConfiguration(configuration, deviceAddress: [0xA1, 0xB2])
        }
        configuration.configID = 1
        configuration.sessionKey = Array(repeating: 0x5A, count: 16)
        #expect(throws: RangingConfigurationError.sessionKeyLength(16, supported: [8])) {
            try AndroidSessionConfiguration(configuration, deviceAddress: [0xA1, 0xB2])
        }
        configuration.configID = 6
        #expect(throws: RangingConfigurationError.unsupportedConfigID(6, supported: [1, 3])) {
            try AndroidSessionConfiguration(configuration, deviceAddress: [0xA1, 0xB2])
        }
    }

    /// The fuzz target's first crash (android-oob, board octet 0x69): a v1 configuration with a
    /// 244 ms slot passed the board check, which bounded slots only below, and 244 × 1200 RSTU
    /// overflowed SLOT_DURATION's 2 octets in the mapping.
    @Test func aLongSlotIsRefusedNotOverflowed() throws {
        let crash: [UInt8] = [
            0x01, 0x02, 0x01, 0x00, 0x01, 0x00, 0x00, 0x1B, 0xC4, 0xD3, 0x78, 0x56, 0x34, 0x12, 0x01, 0x09, 0x0A, 0xF0, 0x00,
            0xF4, 0x08, 0x08, 0x07, 0x01, 0x02, 0x03, 0x0C, 0x05, 0x06, 0x55, 0x53, 0x02, 0x02,
        ]
        guard case .configuration(let configuration) = try OOBMessage(crash).payload, let uwb = configuration.uwb else {
            Issue.record("the crash input is not a configuration")
            return
        }
        #expect(uwb.slotDurationMilliseconds == 244)
        #expect(throws: RangingConfigurationError.unsupportedSlotDuration(244, supported: [1, 2])) { try Octets.board.validate(configuration) }
        #expect(throws: RangingConfigurationError.unsupportedSlotDuration(244, supported: [1, 2])) {
            try AndroidSessionConfiguration(uwb, deviceAddress: [0xA1, 0xB2])
        }
    }

    @Test func intervalsOutsideAndroidsPresetsAreRefused() throws {
        var configuration = Octets.uwbConfiguration
        for interval: UInt16 in [120, 240, 600] {
            configuration.intervalMilliseconds = interval
            try Octets.board.validate(configuration)
        }
        configuration.intervalMilliseconds = 200
        #expect(throws: RangingConfigurationError.intervalNotAPreset(200, configID: 1, presets: [120, 240, 600])) {
            try Octets.board.validate(configuration)
        }
        #expect(RangingConfigurationError.intervalNotAPreset(200, configID: 1, presets: [120, 240, 600]).description.contains("200 ms"))
    }
}
