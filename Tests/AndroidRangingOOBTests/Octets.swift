@testable import AndroidRangingOOB

/// Messages written out by hand from the layouts of Android's "Ranging: Out-of-band message
/// sequence and payload specification" (versions 1-3) as Google's PDL gives them
/// (`oob_packets.pdl`: `OobMessage`, `UwbCapabilities`, `UwbConfiguration`,
/// `CapabilitiesResponseV1`/`V2`, `ConfigurationRequestV1`/`V3`): version, message id, then
/// little-endian fields; a technology block's size octet counts its own two header octets
/// (`_payload_: [+2]`). Not produced by the encoder under test.
enum Octets {
    /// The board the capability below describes: channels 5 and 9, BPRF preambles, config id 1.
    static let board = AndroidBoardCapabilities(
        channels: [5, 9], minimumIntervalMilliseconds: 120, minimumSlotDurationMilliseconds: 1)

    /// The UWB capability block: 20 octets.
    static let uwbCapabilityBlock: [UInt8] = [
        0x00, 0x14,  // technology UWB, size 20
        0xA1, 0xB2,  // UWB address
        0x20, 0x02, 0x00, 0x00,  // channels: bits 5 and 9
        0x00, 0x0F, 0x00, 0x00,  // preamble indexes 9-12: bits 8-11 (index n is bit n - 1)
        0x02, 0x00, 0x00, 0x00,  // config ids: bit 1 (CONFIG_UNICAST_DS_TWR)
        0x78, 0x00,  // minimum ranging interval 120 ms
        0x01,  // minimum slot duration 1 ms
        0x03,  // roles: initiator (bit 0) and responder (bit 1)
    ]

    /// Version 1 Ranging Capability Response with UWB alone: 24 octets, as issue 31 counts.
    static let capabilityResponseV1: [UInt8] = [0x01, 0x01, 0x01, 0x00] + uwbCapabilityBlock

    /// Version 2 with UWB and BLE RSSI, then transitioning and device type.
    static let capabilityResponseV2: [UInt8] =
        [0x02, 0x01, 0x09, 0x00]  // version 2, Capability Response, UWB | BLE RSSI
        + uwbCapabilityBlock
        + [0x03, 0x08, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66]  // BLE RSSI, size 8, Bluetooth address
        + [0x01]  // transitioning: make before break
        + [0x03, 0x00]  // device type: tag

    /// The UWB configuration block with a static STS key: 27 octets.
    static let uwbConfigurationBlock: [UInt8] = [
        0x00, 0x1B,  // technology UWB, size 27
        0xC4, 0xD3,  // the phone's UWB address
        0x78, 0x56, 0x34, 0x12,  // session id 0x12345678
        0x01,  // config id 1
        0x09,  // channel 9
        0x0A,  // preamble index 10
        0xF0, 0x00,  // ranging interval 240 ms
        0x02,  // slot duration 2 ms
        0x08,  // session key length 8
        0x08, 0x07, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,  // vendor id and static STS IV
        0x55, 0x53,  // country code "US"
        0x02,  // device role: responder
        0x02,  // device mode: controlee
    ]

    static let configurationV1: [UInt8] = [0x01, 0x02, 0x01, 0x00, 0x01, 0x00] + uwbConfigurationBlock
    /// Version 3 adds the motion-support octet after the blocks.
    static let configurationV3: [UInt8] = [0x03, 0x02, 0x01, 0x00, 0x01, 0x00] + uwbConfigurationBlock + [0x01]

    /// The UWB configuration those blocks hold.
    static let uwbConfiguration = UWBConfiguration(
        address: [0xC4, 0xD3], sessionID: 0x1234_5678, configID: 1, channel: 9, preambleIndex: 10,
        intervalMilliseconds: 240, slotDurationMilliseconds: 2, sessionKey: [0x08, 0x07, 1, 2, 3, 4, 5, 6],
        countryCode: Array("US".utf8), role: .responder, mode: .controlee)

    /// Every seed message, for the refusal and mutation loops.
    static let all: [[UInt8]] = [
        [0x01, 0x00, 0x01, 0x00], capabilityResponseV1, capabilityResponseV2, configurationV1, configurationV3,
        [0x01, 0x03, 0x01, 0x00], [0x01, 0x06, 0x01, 0x00], [0x01, 0x07, 0x01, 0x00], [0x03, 0x08, 0x02],
    ]
}
