import ByteCoding
import UCI

/// The FiRa session a phone's shareable configuration implies, for the rig's board as the
/// controlee and responder: the session id for SESSION_INIT and the TLVs for
/// SESSION_SET_APP_CONFIG. It follows what AOSP does with the same blob (the ranging test app's
/// `IosAccessoryRangingParameters` asks for `CONFIG_UNICAST_DS_TWR`, whose fixed values
/// `ConfigurationManager` and `FiraOpenSessionParams` hold and `FiraEncoder` writes):
///
/// | TLV | value | from |
/// |---|---|---|
/// | DEVICE_TYPE 0x00 | 0 controlee | the accessory's role |
/// | RANGING_ROUND_USAGE 0x01 | 2 DS-TWR deferred | CONFIG_UNICAST_DS_TWR |
/// | STS_CONFIG 0x02 | 0 static | CONFIG_UNICAST_DS_TWR |
/// | MULTI_NODE_MODE 0x03 | 0 unicast | CONFIG_UNICAST_DS_TWR |
/// | CHANNEL_NUMBER 0x04 | channel | blob |
/// | NO_OF_CONTROLEE 0x05 | 1 | unicast |
/// | DEVICE_MAC_ADDRESS 0x06 | the rig's short address | rig (`AccessoryOctetOrder`) |
/// | DST_MAC_ADDRESS 0x07 | the phone's short address | blob (`AccessoryOctetOrder`) |
/// | SLOT_DURATION 0x08 | slot duration, RSTU (2) | blob |
/// | RANGING_DURATION 0x09 | ranging interval, ms (4) | blob |
/// | RANGING_ROUND_CONTROL 0x0C | round control | blob |
/// | DEVICE_ROLE 0x11 | 0 responder | the accessory's role |
/// | RFRAME_CONFIG 0x12 | 3 SP3 | FiraOpenSessionParams default |
/// | PREAMBLE_CODE_INDEX 0x14 | preamble code | blob |
/// | SFD_ID 0x15 | 2 | FiraOpenSessionParams default |
/// | SLOTS_PER_RR 0x1B | slots per round | blob |
/// | SCHEDULE_MODE 0x22 | 1 time-scheduled | FiraOpenSessionParams default |
/// | MAC_ADDRESS_MODE 0x26 | 0 short | ConfigurationManager |
/// | VENDOR_ID 0x27 | 0x004C, Apple | test app (`AccessoryOctetOrder`) |
/// | STATIC_STS_IV 0x28 | the phone's 6 octets | blob |
/// | HOPPING_MODE 0x2C | hopping (0 for 1.1) | blob |
///
/// What each round reports (AOA_RESULT_REQ, RESULT_REPORT_CONFIG, RSSI_REPORTING,
/// RANGE_DATA_NTF_CONFIG) is left to the bridge's dialect, which adds it for every session.
package struct AccessorySessionConfiguration: Equatable, Sendable {
    /// The phone's session id: SESSION_INIT's argument, not a TLV.
    package var sessionID: UInt32
    package var appConfig: [AppConfigTLV]

    /// Apple's Bluetooth company id, the vendor id a static STS is derived with.
    package static let appleVendorID: UInt16 = 0x004C

    /// The session for `configuration` on a rig whose short address is `deviceAddress`.
    package init(_ configuration: ShareableConfiguration, deviceAddress: UInt16, order: AccessoryOctetOrder = .asInBlobs) {
        sessionID = configuration.sessionID
        // The rig's address is little-endian in its accessory configuration data, so "as in the
        // blobs" is little-endian here too.
        var littleEndianDevice: [UInt8] = []
        littleEndianDevice.appendLE(deviceAddress)
        var littleEndianVendor: [UInt8] = []
        littleEndianVendor.appendLE(Self.appleVendorID)
        let arrange: ([UInt8]) -> [UInt8] = order == .asInBlobs ? { $0 } : { $0.reversed() }
        appConfig = [
            .deviceType(.controlee),
            .rangingRoundUsage(.dsTwrDeferred),
            .stsConfig(.staticSTS),
            .multiNodeMode(.unicast),
            .channel(configuration.channel),
            .numberOfControlees(1),
            AppConfigTLV(id: .deviceMacAddress, value: arrange(littleEndianDevice)),
            AppConfigTLV(id: .dstMacAddress, value: arrange(configuration.destinationAddress)),
            .slotDuration(rstu: configuration.slotDurationRSTU),
            .rangingDuration(milliseconds: UInt32(configuration.rangingIntervalMilliseconds)),
            .rangingRoundControl(configuration.roundControl),
            .deviceRole(.responder),
            .rframeConfig(3),
            .preambleCodeIndex(configuration.preambleCode),
            .sfdID(2),
            .slotsPerRangingRound(configuration.slotsPerRound),
            .scheduleMode(1),
            .macAddressMode(.short),
            AppConfigTLV(id: .vendorID, value: arrange(littleEndianVendor)),
            .staticSTSIV(configuration.staticSTSIV),
            .hoppingMode(configuration.hopping ? 1 : 0),
        ]
    }
}
