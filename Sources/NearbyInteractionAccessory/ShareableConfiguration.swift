import ByteCoding

/// The iPhone's shareable configuration data (message 0x0B's payload): the FiRa session the phone
/// will run with the rig. Layout (little-endian, Apple's Nearby Interaction Accessory Protocol
/// Specification R4; AOSP's `IosAccessoryConfigurationData.AppleUwbConfigData` reads the same):
///
///     0  major (2)  2 minor (2)  4 length of what follows (1): 25 for 1.1, 30 for 2.0
///     5  country code (2, ASCII)        7  session id (4)
///     11 preamble code index (1)        12 channel (1)
///     13 slots per round (2)            15 slot duration in RSTU (2)
///     17 ranging interval in ms (2)     19 ranging round control (1)
///     20 static STS IV (6)              26 destination (the phone's) short address (2)
///     28 maximum clock drift in ppm (2)
///     2.0 only: 30 reserved (4), ignored   34 hopping (1): 0 off, 1 on
///
/// Parsing checks every field against the board before anything reaches it: a blob that parses
/// maps to a session the board can run (`AccessorySessionConfiguration`).
package struct ShareableConfiguration: Equatable, Sendable {
    package var version: UWBConfigurationVersion
    /// The phone's regulatory region (ISO 3166 letters). Informational: the board's region is
    /// the rig's configuration, set at bring-up.
    package var countryCode: String
    package var sessionID: UInt32
    package var preambleCode: UInt8
    package var channel: UInt8
    package var slotsPerRound: UInt8
    package var slotDurationRSTU: UInt16
    package var rangingIntervalMilliseconds: UInt16
    package var roundControl: UInt8
    /// The 6 octets the phone's static STS starts from, in the blob's order.
    package var staticSTSIV: [UInt8]
    /// The phone's short address, in the blob's order (which order UCI wants is
    /// `AccessoryOctetOrder`'s question).
    package var destinationAddress: [UInt8]
    /// Informational: the phone's clock tolerance. UCI has no parameter for it.
    package var maxClockDriftPPM: UInt16
    /// Version 2.0's hopping octet; false for 1.1, which has none.
    package var hopping: Bool

    /// The header: major, minor, length.
    package static let headerSize = 5
    /// FiRa slots are whole multiples of 1 ms (1200 RSTU); a DS-TWR slot needs at least 2 ms.
    package static let slotDurationStep: UInt16 = 1200
    package static let minimumSlotDuration: UInt16 = 2400
    /// A DS-TWR deferred round with its control, result and report messages takes six slots
    /// (AOSP's `IosAccessoryConfigurationData` notes the same minimum); UCI's SLOTS_PER_RR is
    /// one octet.
    package static let slotsPerRoundRange: ClosedRange<UInt16> = 6...255
    /// Time-scheduled ranging with a control message (bit 1), with or without the result report
    /// (bit 0): 0x02 or 0x03. Other values (0x06 is contention-based) need a session this
    /// mapping does not set up.
    package static let roundControls: [UInt8] = [0x02, 0x03]

    /// Reads and checks `bytes`, the whole blob (without the message id), for a board with
    /// `board`'s capabilities.
    package init(parsing bytes: [UInt8], board: AccessoryCapabilities) throws(ShareableConfigurationError) {
        var reader = LittleEndianReader<ShareableConfigurationError>(bytes, context: "shareable configuration")
        let major = try reader.u16("major version")
        let minor = try reader.u16("minor version")
        let length = try reader.u8("length")
        guard let version = UWBConfigurationVersion(major: major, minor: minor) else {
            throw .unsupportedVersion(major: major, minor: minor)
        }
        guard Int(length) == version.shareableLength else { throw .lengthMismatch(version: version, declared: length) }
        guard reader.remaining >= version.shareableLength else {
            throw .truncated(field: "body", needed: version.shareableLength, available: reader.remaining)
        }
        guard reader.remaining == version.shareableLength else {
            throw .trailingOctets(reader.remaining - version.shareableLength)
        }
        self.version = version
        countryCode = try Self.countryCode(reader.bytes(2, "country code"))
        sessionID = try reader.u32("session id")
        guard sessionID != 0 else { throw .reservedSessionID }
        preambleCode = try reader.u8("preamble code")
        channel = try reader.u8("channel")
        guard board.preambleCodes.contains(preambleCode) else { throw .unsupportedPreambleCode(preambleCode, supported: board.preambleCodes) }
        guard board.channels.contains(channel) else { throw .unsupportedChannel(channel, supported: board.channels) }
        let slots = try reader.u16("slots per round")
        guard Self.slotsPerRoundRange.contains(slots) else { throw .slotsPerRound(slots) }
        slotsPerRound = UInt8(slots)
        slotDurationRSTU = try reader.u16("slot duration")
        guard slotDurationRSTU >= Self.minimumSlotDuration, slotDurationRSTU % Self.slotDurationStep == 0 else {
            throw .slotDuration(slotDurationRSTU)
        }
        rangingIntervalMilliseconds = try reader.u16("ranging interval")
        guard rangingIntervalMilliseconds > 0 else { throw .zeroRangingInterval }
        // A round must end before the next one starts: slots × duration, in ms, within the interval.
        let roundMilliseconds = Int(slots) * Int(slotDurationRSTU) / Int(Self.slotDurationStep)
        guard roundMilliseconds <= rangingIntervalMilliseconds else {
            throw .roundLongerThanInterval(roundMilliseconds: roundMilliseconds, intervalMilliseconds: rangingIntervalMilliseconds)
        }
        roundControl = try reader.u8("ranging round control")
        guard Self.roundControls.contains(roundControl) else { throw .roundControl(roundControl) }
        staticSTSIV = try reader.bytes(6, "static STS IV")
        destinationAddress = try reader.bytes(2, "destination address")
        maxClockDriftPPM = try reader.u16("maximum clock drift")
        hopping = false
        if version == .v2_0 {
            try reader.skip(4, "reserved")
            let mode = try reader.u8("hopping mode")
            guard mode <= 1 else { throw .hoppingMode(mode) }
            guard mode == 0 || board.hopping else { throw .hoppingUnsupported }
            hopping = mode == 1
        }
    }

    /// Two ASCII letters, as ISO 3166 spells a region.
    private static func countryCode(_ octets: [UInt8]) throws(ShareableConfigurationError) -> String {
        let isLetter = { (octet: UInt8) in (0x41...0x5A).contains(octet) || (0x61...0x7A).contains(octet) }
        guard octets.allSatisfy(isLetter) else { throw .countryCode(octets) }
        return String(decoding: octets, as: UTF8.self)
    }
}
