import ByteCoding
import UCI

/// The FiRa session a checked UWB configuration becomes on the rig's board: the session id for
/// SESSION_INIT and the TLVs for SESSION_SET_APP_CONFIG, set the way Android's own UWB stack opens
/// the same config id. CONFIG_UNICAST_DS_TWR (id 1) and CONFIG_PROVISIONED_UNICAST_DS_TWR (id 3:
/// the same but for the STS, below) are mapped; their fixed values are AOSP's
/// (packages/modules/Uwb, ranging/uwb_backend/src/com/android/ranging/uwb/backend/internal/
/// `ConfigurationManager.java` for the per-id properties and `Utils.java` for the per-id timing,
/// both read in `GrapheneOS/platform_packages_modules_Uwb`):
///
/// | TLV | value | from |
/// |---|---|---|
/// | DEVICE_TYPE 0x00 | 0 controlee / 1 controller | the configuration's device mode |
/// | RANGING_ROUND_USAGE 0x01 | 2 DS-TWR deferred | ConfigurationManager, id 1 |
/// | STS_CONFIG 0x02 | 0 static | ConfigurationManager, id 1 |
/// | MULTI_NODE_MODE 0x03 | 0 unicast | ConfigurationManager, id 1 |
/// | CHANNEL_NUMBER 0x04 | channel | configuration |
/// | NO_OF_CONTROLEE 0x05 | 1 | unicast |
/// | DEVICE_MAC_ADDRESS 0x06 | the rig's short address | the rig (wire order) |
/// | DST_MAC_ADDRESS 0x07 | the phone's short address | configuration (wire order) |
/// | SLOT_DURATION 0x08 | slot ms × 1200 RSTU | configuration (Utils.convertMsToRstu) |
/// | RANGING_DURATION 0x09 | interval, ms (4) | configuration (one of Utils' presets) |
/// | RANGING_ROUND_CONTROL 0x0C | 0x03: control message and result report | FiraOpenSessionParams default |
/// | DEVICE_ROLE 0x11 | 0 responder / 1 initiator | the configuration's device role |
/// | RFRAME_CONFIG 0x12 | 3 SP3 | FiraOpenSessionParams default |
/// | PREAMBLE_CODE_INDEX 0x14 | preamble index | configuration |
/// | SFD_ID 0x15 | 2 | FiraOpenSessionParams default |
/// | SLOTS_PER_RR 0x1B | 6 | Utils, id 1 |
/// | SCHEDULE_MODE 0x22 | 1 time-scheduled | FiraOpenSessionParams default |
/// | MAC_ADDRESS_MODE 0x26 | 0 short | ConfigurationManager |
/// | VENDOR_ID 0x27 | key octets 0-1 | configuration's session key (as sent) |
/// | STATIC_STS_IV 0x28 | key octets 2-7 | configuration's session key |
/// | HOPPING_MODE 0x2C | 1 FiRa hopping | Utils, id 1 (`hoppingEnabled`) |
///
/// Config id 3 (provisioned STS; `ConfigurationManager`'s `STS_CONFIG_PROVISIONED` branch, and
/// `Utils`' timing for id 3, which is id 1's): STS_CONFIG 0x02 is 3, and instead of VENDOR_ID and
/// STATIC_STS_IV the 16-octet key goes to SESSION_KEY 0x45, with KEY_ROTATION 0x23 = 1 and
/// KEY_ROTATION_RATE 0x24 = 0 (`setIsKeyRotationEnabled(true)`, `setKeyRotationRate(0)`).
///
/// Byte order: addresses and the vendor id go to the board in the order the OOB message carries
/// them, as AOSP does without its `isReversedByteOrderFiraParams` flag; whether a given board
/// wants them reversed is the same open question `AccessoryOctetOrder` answers for Apple's
/// protocol, and untested here. What each round reports (AOA_RESULT_REQ, RANGE_DATA_NTF_CONFIG
/// and the rest) is left to the bridge's dialect, as for the accessory session.
package struct AndroidSessionConfiguration: Equatable, Sendable {
    package var sessionID: UInt32
    package var appConfig: [AppConfigTLV]

    /// Slots per ranging round for config id 1 (Utils' `slotPerRangingRound`).
    package static let slotsPerRound: UInt8 = 6
    /// FiRa's ranging slot unit: 1 ms is 1200 RSTU.
    package static let rstuPerMillisecond: UInt16 = 1200

    /// The session for `configuration`, already checked by `board`, on a rig whose short address
    /// is `deviceAddress` (wire order). Refuses config ids other than 1 and 3, and keys of
    /// another length than the id's (8 for 1, 16 for 3), which this mapping does not cover.
    package init(_ configuration: UWBConfiguration, deviceAddress: [UInt8]) throws(RangingConfigurationError) {
        precondition(deviceAddress.count == 2, "a UWB short address is 2 octets")
        let mapped = AndroidBoardCapabilities.keyLengths.keys.sorted()
        guard let keyLengths = AndroidBoardCapabilities.keyLengths[configuration.configID] else {
            throw .unsupportedConfigID(configuration.configID, supported: mapped)
        }
        guard keyLengths.contains(configuration.sessionKey.count) else {
            throw .sessionKeyLength(configuration.sessionKey.count, supported: keyLengths)
        }
        let provisioned = configuration.configID == AndroidBoardCapabilities.provisionedUnicastDSTWR
        // Checked again here, not trusted: a 244 ms slot overflowed SLOT_DURATION's 2 octets
        // (found by the android-oob fuzz target, when the board check bounded it only below).
        guard AndroidBoardCapabilities.slotDurations.contains(configuration.slotDurationMilliseconds) else {
            throw .unsupportedSlotDuration(configuration.slotDurationMilliseconds, supported: AndroidBoardCapabilities.slotDurations)
        }
        sessionID = configuration.sessionID
        appConfig = [
            .deviceType(configuration.mode == .controller ? .controller : .controlee),
            .rangingRoundUsage(.dsTwrDeferred),
            .stsConfig(provisioned ? .provisioned : .staticSTS),
            .multiNodeMode(.unicast),
            .channel(configuration.channel),
            .numberOfControlees(1),
            AppConfigTLV(id: .deviceMacAddress, value: deviceAddress),
            AppConfigTLV(id: .dstMacAddress, value: configuration.address),
            .slotDuration(rstu: UInt16(configuration.slotDurationMilliseconds) * Self.rstuPerMillisecond),
            .rangingDuration(milliseconds: UInt32(configuration.intervalMilliseconds)),
            .rangingRoundControl(0x03),
            .deviceRole(configuration.role == .initiator ? .initiator : .responder),
            .rframeConfig(3),
            .preambleCodeIndex(configuration.preambleIndex),
            .sfdID(2),
            .slotsPerRangingRound(Self.slotsPerRound),
            .scheduleMode(1),
            .macAddressMode(.short),
        ]
        appConfig += provisioned
            ? [
                AppConfigTLV(id: .sessionKey, value: configuration.sessionKey),
                AppConfigTLV(id: .keyRotation, value: [1]),
                AppConfigTLV(id: .keyRotationRate, value: [0]),
            ]
            : [AppConfigTLV(id: .vendorID, value: Array(configuration.sessionKey[0..<2])), .staticSTSIV(Array(configuration.sessionKey[2..<8]))]
        appConfig.append(.hoppingMode(1))
    }
}
