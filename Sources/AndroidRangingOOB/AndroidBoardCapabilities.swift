import UCI

/// What the rig's board offers an Android phone over the ranging OOB exchange, and the one place
/// a phone's UWB configuration is checked against it. Both the capability the rig sends
/// (`capability(address:)`) and the check of the configuration that comes back (`validate`) are
/// built from this value, so the rig never accepts what it did not offer nor offers what it would
/// refuse (the role `AccessoryCapabilities` plays for Apple's protocol).
package struct AndroidBoardCapabilities: Equatable, Sendable {
    /// UWB channels the board can range on.
    package var channels: [UInt8]
    /// Preamble code indexes the board can range with.
    package var preambleIndexes: [UInt8]
    /// Android config ids the board can run (issue 31: only those whose UCI mapping exists: 1,
    /// and 3 on a board with provisioned STS).
    package var configIDs: [UInt8]
    package var minimumIntervalMilliseconds: UInt16
    package var minimumSlotDurationMilliseconds: UInt8
    /// The UWB roles the board can take.
    package var roles: UWBRoles
    /// Session key lengths the board can use: 8 (static STS: vendor id and STS IV) always; 16
    /// (provisioned STS's 128-bit SESSION_KEY) only for a board with provisioned STS. 32 is not
    /// offered: which bit of SUPPORTED_SESSION_KEY_LENGTH says a board takes a 256-bit provisioned
    /// key is not settled by the sources we could read.
    package var sessionKeyLengths: [Int]

    /// The BPRF preamble indexes (9 to 12) every FiRa board supports.
    package static let bprfPreambleIndexes: [UInt8] = [9, 10, 11, 12]
    /// CONFIG_UNICAST_DS_TWR, the config id Jetpack's `RangingParameters` and AOSP's presets
    /// both call 1.
    package static let unicastDSTWR: UInt8 = 1
    /// CONFIG_PROVISIONED_UNICAST_DS_TWR in the Ranging module's numbering (AOSP
    /// ranging/uwb_backend `Utils.java`: 3, "same as CONFIG_ID_1, except P-STS security mode is
    /// enabled"); Jetpack's older androidx_backend numbers it 4 and calls 3 an AoA-less static one.
    package static let provisionedUnicastDSTWR: UInt8 = 3

    /// The session key length each mapped config id takes: a static STS's vendor id and IV (8),
    /// a provisioned STS's SESSION_KEY (16).
    package static let keyLengths: [UInt8: [Int]] = [unicastDSTWR: [8], provisionedUnicastDSTWR: [16]]

    /// The ranging intervals (fast, normal, infrequent) Android runs each config id at: AOSP's
    /// `Utils.java` (packages/modules/Uwb, ranging/uwb_backend/.../internal/) holds one set per id,
    /// and `UwbOobConfig` refuses any other interval, so a phone never sends one; one that does
    /// is refused here too.
    package static let presetIntervals: [UInt8: [UInt16]] = [
        1: [120, 240, 600], 2: [120, 200, 600], 3: [120, 240, 600], 4: [120, 200, 600], 5: [120, 200, 600], 6: [96, 240, 600],
    ]

    /// The slot durations Android ranges with, in ms (AOSP `Utils.java`'s `SlotDuration`: 1 or
    /// 2). UCI's SLOT_DURATION is 2 octets of RSTU (1200 a millisecond), so anything past 54 ms
    /// could not even be sent.
    package static let slotDurations: [UInt8] = [1, 2]

    package init(
        channels: [UInt8], preambleIndexes: [UInt8] = Self.bprfPreambleIndexes, configIDs: [UInt8] = [Self.unicastDSTWR],
        minimumIntervalMilliseconds: UInt16, minimumSlotDurationMilliseconds: UInt8, roles: UWBRoles = .assigned,
        sessionKeyLengths: [Int] = [8]
    ) {
        self.channels = channels
        self.preambleIndexes = preambleIndexes
        self.configIDs = configIDs
        self.minimumIntervalMilliseconds = minimumIntervalMilliseconds
        self.minimumSlotDurationMilliseconds = minimumSlotDurationMilliseconds
        self.roles = roles
        self.sessionKeyLengths = sessionKeyLengths
    }

    /// The channels an Android initiator ranges on today (issue 31, from AOSP's selection of a
    /// responder's channel): 9, else 5.
    package static let androidChannels: [UInt8] = [5, 9]

    /// Read from a board's CORE_GET_CAPS_INFO answer (UCI major version `uciMajor`): the
    /// channels of its SUPPORTED_CHANNELS bitmap an Android phone uses (channel 9 alone for a
    /// board that does not report them, the channel the FiRa PHY makes mandatory). Config id 1,
    /// and 3 with 16-octet keys when the board runs provisioned STS (UCI 2.0, SUPPORTED_STS_CONFIG
    /// bit 3), since those are the ones mapped (`AndroidSessionConfiguration`); BPRF preambles;
    /// both roles; 120 ms (Android's fastest interval for both ids) and 1 ms slots, which UCI
    /// capabilities do not report.
    package init(capabilities: [CapabilityTLV], uciMajor: UInt8) {
        let bitmap = Capabilities.value(of: .channels, in: capabilities, uciMajor: uciMajor)?.first ?? 0
        let reported = Capabilities.channelBits.enumerated().filter { bitmap & (1 << $0.offset) != 0 }.map(\.element)
        let usable = reported.filter(Self.androidChannels.contains)
        let stsConfigs = Capabilities.value(of: .stsConfigs, in: capabilities, uciMajor: uciMajor)?.first ?? 0
        let provisioned = uciMajor >= 2 && stsConfigs & (1 << STSConfig.provisioned.rawValue) != 0
        self.init(
            channels: reported.isEmpty ? [9] : usable,
            configIDs: provisioned ? [Self.unicastDSTWR, Self.provisionedUnicastDSTWR] : [Self.unicastDSTWR],
            minimumIntervalMilliseconds: 120, minimumSlotDurationMilliseconds: 1, sessionKeyLengths: provisioned ? [8, 16] : [8])
    }

    /// The UWB block of the rig's Capability Response, for a rig whose short address is
    /// `address` (wire order).
    package func capability(address: [UInt8]) -> UWBCapability {
        UWBCapability(
            address: address, channels: channels, preambleIndexes: preambleIndexes, configIDs: configIDs,
            minimumIntervalMilliseconds: minimumIntervalMilliseconds,
            minimumSlotDurationMilliseconds: minimumSlotDurationMilliseconds, roles: roles)
    }

    /// Checks every field of a phone's UWB configuration the board depends on, in the order the
    /// layout has them; the first that fails is the reason.
    package func validate(_ configuration: UWBConfiguration) throws(RangingConfigurationError) {
        guard configuration.sessionID != 0 else { throw .reservedSessionID }
        guard configIDs.contains(configuration.configID) else { throw .unsupportedConfigID(configuration.configID, supported: configIDs) }
        guard channels.contains(configuration.channel) else { throw .unsupportedChannel(configuration.channel, supported: channels) }
        guard preambleIndexes.contains(configuration.preambleIndex) else {
            throw .unsupportedPreambleIndex(configuration.preambleIndex, supported: preambleIndexes)
        }
        guard configuration.intervalMilliseconds >= minimumIntervalMilliseconds else {
            throw .intervalBelowMinimum(configuration.intervalMilliseconds, minimum: minimumIntervalMilliseconds)
        }
        if let presets = Self.presetIntervals[configuration.configID], !presets.contains(configuration.intervalMilliseconds) {
            throw .intervalNotAPreset(configuration.intervalMilliseconds, configID: configuration.configID, presets: presets)
        }
        guard configuration.slotDurationMilliseconds >= minimumSlotDurationMilliseconds else {
            throw .slotBelowMinimum(configuration.slotDurationMilliseconds, minimum: minimumSlotDurationMilliseconds)
        }
        guard Self.slotDurations.contains(configuration.slotDurationMilliseconds) else {
            throw .unsupportedSlotDuration(configuration.slotDurationMilliseconds, supported: Self.slotDurations)
        }
        let keyLengths = (Self.keyLengths[configuration.configID] ?? sessionKeyLengths).filter(sessionKeyLengths.contains)
        guard keyLengths.contains(configuration.sessionKey.count) else {
            throw .sessionKeyLength(configuration.sessionKey.count, supported: keyLengths)
        }
        guard roles.contains(configuration.role.bit) else { throw .unsupportedRole(configuration.role) }
    }

    /// The UWB configuration of a whole Ranging Configuration message, checked; a configuration
    /// without UWB is refused, since UWB is what the board is for.
    package func validate(_ configuration: RangingConfiguration) throws(RangingConfigurationError) -> UWBConfiguration {
        guard let uwb = configuration.uwb else { throw .noUWBConfiguration }
        try validate(uwb)
        return uwb
    }
}
