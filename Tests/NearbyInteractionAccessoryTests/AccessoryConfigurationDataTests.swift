import Testing
import UCI

@testable import NearbyInteractionAccessory

/// Expected octets written by hand from the accessory configuration data layout of Apple's
/// Nearby Interaction Accessory Protocol Specification R4, as AOSP's ranging test app
/// (com.android.ranging.rangingtestapp, IosAccessoryConfigurationData.java:
/// `AccessoryConfigurationData.serialize`, `UwbConfigData.serialize`) and brian-level/nrfuwb
/// (components/nearby_interaction/nearby_interaction.c, `_NIcreateIOSacd`) write it.
@Suite struct AccessoryConfigurationDataTests {
    @Test func version1_1ByteForByte() {
        let data = AccessoryConfigurationData(
            version: .v1_1, shortAddress: 0xA1B2, capabilities: AccessoryCapabilities(channels: [5, 9]))
        #expect(
            data.encoded == [
                0x01, 0x00, 0x00, 0x00,  // header version 1.0
                0x00,  // preferred update rate: automatic
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // reserved
                21,  // UWB configuration data length (1.1)
                0x01, 0x00, 0x01, 0x00,  // UWB configuration data version 1.1
                0x00, 0x00, 0x00, 0x00,  // manufacturer id
                0x00, 0x00, 0x00, 0x00,  // model id
                0x00, 0x00, 0x00, 0x00,  // middleware version
                0x00,  // device role: responder
                0xB2, 0xA1,  // short address 0xA1B2, little-endian
                20, 0x00,  // maximum clock drift, ppm
            ])
    }

    @Test func version2_0ByteForByte() {
        var data = AccessoryConfigurationData(
            version: .v2_0, shortAddress: 0xA1B2, capabilities: AccessoryCapabilities(channels: [9], hopping: true),
            preferredUpdateRate: .userInteractive)
        data.manufacturerID = 0x1122_3344
        data.modelID = 0x5566_7788
        data.middlewareVersion = 0x99AA_BBCC
        #expect(
            data.encoded == [
                0x01, 0x00, 0x00, 0x00,  // header version 1.0
                20,  // preferred update rate: user interactive
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // reserved
                32,  // UWB configuration data length (2.0)
                0x02, 0x00, 0x00, 0x00,  // UWB configuration data version 2.0
                0x44, 0x33, 0x22, 0x11,  // manufacturer id
                0x88, 0x77, 0x66, 0x55,  // model id
                0xCC, 0xBB, 0xAA, 0x99,  // middleware version
                0x00,  // device role: responder
                0xB2, 0xA1,  // short address
                20, 0x00,  // maximum clock drift, ppm
                0x00, 0x00, 0x00, 0x00,  // reserved (2.0)
                0x01,  // hopping: the board can hop
                6, 0x00,  // slots per round
                0x60, 0x09,  // slot duration 2400 RSTU
                240, 0x00,  // ranging interval, ms
            ])
    }

    @Test func hoppingIsAskedOnlyOfABoardThatHops() {
        let data = AccessoryConfigurationData(version: .v2_0, shortAddress: 1, capabilities: AccessoryCapabilities(channels: [9]))
        #expect(data.encoded[41] == 0x00)
    }

    /// SUPPORTED_CHANNELS is type 0x0E and SUPPORTED_HOPPING_MODE 0x0B in UCI 2.0's
    /// CORE_GET_CAPS_INFO table, 0x0B and 0x08 in 1.x's (FiRa UCI; AOSP `CapabilityParam`);
    /// bit 0 of the channel bitmap is channel 5, bit 3 channel 9.
    @Test func capabilitiesComeFromTheBoardsAnswer() {
        let v2 = AccessoryCapabilities(
            capabilities: [CapabilityTLV(type: 0x0E, value: [0x09]), CapabilityTLV(type: 0x0B, value: [0x01])], uciMajor: 2)
        #expect(v2 == AccessoryCapabilities(channels: [5, 9], preambleCodes: [9, 10, 11, 12], hopping: true))
        let v1 = AccessoryCapabilities(
            capabilities: [CapabilityTLV(type: 0x0B, value: [0x08]), CapabilityTLV(type: 0x08, value: [0x00])], uciMajor: 1)
        #expect(v1 == AccessoryCapabilities(channels: [9], hopping: false))
        #expect(AccessoryCapabilities(capabilities: [], uciMajor: 2) == AccessoryCapabilities(channels: [9], hopping: false))
    }
}
