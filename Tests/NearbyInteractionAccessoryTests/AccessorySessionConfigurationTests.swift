import Testing
import UCI

@testable import NearbyInteractionAccessory

/// The TLVs written by hand as id, length, value, in the order of the mapping table (docs/PROTOCOL.md,
/// "Phones"), from what AOSP does with a shareable configuration: the ranging test app
/// (IosAccessoryRangingParameters.java, `createRangingPreference`: CONFIG_UNICAST_DS_TWR, vendor id
/// 4C 00 and the phone's STS IV as the session key info, channel, preamble, slot duration, the
/// addresses), androidx.core.uwb's ConfigurationManager.java (`createOpenSessionParams`: DS-TWR
/// deferred, unicast, static STS, short addresses) and the UWB service's FiraEncoder.java (the
/// TLV ids and sizes; FiraOpenSessionParams' defaults for SP3, SFD 2, time-scheduled ranging).
@Suite struct AccessorySessionConfigurationTests {
    /// Shared by both orders; `address`, `destination` and `vendor` are what the order changes.
    func expected(address: [UInt8], destination: [UInt8], vendor: [UInt8]) -> [UInt8] {
        [
            0x00, 1, 0x00,  // DEVICE_TYPE: controlee
            0x01, 1, 0x02,  // RANGING_ROUND_USAGE: DS-TWR deferred
            0x02, 1, 0x00,  // STS_CONFIG: static
            0x03, 1, 0x00,  // MULTI_NODE_MODE: unicast
            0x04, 1, 9,  // CHANNEL_NUMBER: the blob's
            0x05, 1, 1,  // NO_OF_CONTROLEE
            0x06, 2, address[0], address[1],  // DEVICE_MAC_ADDRESS: the rig's 0xA1B2
            0x07, 2, destination[0], destination[1],  // DST_MAC_ADDRESS: the blob's C4 D3
            0x08, 2, 0x60, 0x09,  // SLOT_DURATION: 2400 RSTU
            0x09, 4, 240, 0x00, 0x00, 0x00,  // RANGING_DURATION: 240 ms
            0x0C, 1, 0x03,  // RANGING_ROUND_CONTROL: the blob's
            0x11, 1, 0x00,  // DEVICE_ROLE: responder
            0x12, 1, 0x03,  // RFRAME_CONFIG: SP3
            0x14, 1, 10,  // PREAMBLE_CODE_INDEX: the blob's
            0x15, 1, 2,  // SFD_ID
            0x1B, 1, 25,  // SLOTS_PER_RR: the blob's
            0x22, 1, 1,  // SCHEDULE_MODE: time-scheduled
            0x26, 1, 0,  // MAC_ADDRESS_MODE: short
            0x27, 2, vendor[0], vendor[1],  // VENDOR_ID: Apple, 0x004C
            0x28, 6, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,  // STATIC_STS_IV: the blob's
            0x2C, 1, 0,  // HOPPING_MODE: 1.1 has none
        ]
    }

    func octets(_ tlvs: [AppConfigTLV]) -> [UInt8] {
        tlvs.flatMap { [$0.id.rawValue, UInt8($0.value.count)] + $0.value }
    }

    @Test func mapsAsAOSPsCodeByDefault() throws {
        let shareable = try ShareableConfiguration(parsing: Blobs.version1_1, board: Blobs.board)
        let session = AccessorySessionConfiguration(shareable, deviceAddress: 0xA1B2)
        #expect(session.sessionID == 0x1234_5678)
        #expect(octets(session.appConfig) == expected(address: [0xB2, 0xA1], destination: [0xC4, 0xD3], vendor: [0x4C, 0x00]))
    }

    @Test func reversedOrderSwapsTheAddressesAndVendorID() throws {
        let shareable = try ShareableConfiguration(parsing: Blobs.version1_1, board: Blobs.board)
        let session = AccessorySessionConfiguration(shareable, deviceAddress: 0xA1B2, order: .reversed)
        #expect(octets(session.appConfig) == expected(address: [0xA1, 0xB2], destination: [0xD3, 0xC4], vendor: [0x00, 0x4C]))
    }

    /// 2.0's hopping octet reaches HOPPING_MODE; the rest as above (checked field by field).
    @Test func hoppingFromVersion2_0() throws {
        let shareable = try ShareableConfiguration(parsing: Blobs.version2_0, board: Blobs.board)
        let tlvs = AccessorySessionConfiguration(shareable, deviceAddress: 0x0001).appConfig
        let value = { (id: UInt8) in tlvs.first { $0.id.rawValue == id }?.value }
        #expect(value(0x2C) == [1])
        #expect(value(0x04) == [5])
        #expect(value(0x08) == [0x10, 0x0E])
        #expect(value(0x09) == [96, 0, 0, 0])
        #expect(value(0x0C) == [0x02])
        #expect(value(0x1B) == [6])
        #expect(value(0x07) == [0x34, 0x12])
        #expect(Set(tlvs.map(\.id.rawValue)).count == tlvs.count, "no TLV twice")
    }
}
