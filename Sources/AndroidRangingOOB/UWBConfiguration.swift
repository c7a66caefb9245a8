import ByteCoding

/// The UWB block of a Ranging Configuration: the session the initiator chose. Layout after the
/// block's technology id (0x0) and size octets (the PDL's `UwbConfiguration`; the size counts the
/// two header octets, so it is 19 + the key's length: 27 = 0x1B with an 8-octet key):
///
///     0  the initiator's UWB address (2, as sent)    2  session id (4)
///     6  config id (1)    7  channel (1)    8  preamble index (1)
///     9  ranging interval, ms (2)    11 slot duration, ms (1)
///     12 session key length k (1)    13 session key (k)
///     13+k country code (2, ISO 3166 letters)    15+k device role (1)    16+k device mode (1)
///
/// The key is a static STS's vendor id (2) and STS IV (6) when k is 8, a provisioned STS session
/// key when it is 16 or 32 (AOSP's `UwbOobConfig`). The codec takes any k the size octet allows;
/// which k a board can use is `AndroidBoardCapabilities`' question.
package struct UWBConfiguration: Equatable, Sendable {
    /// The peer's (the initiator's) short UWB address, in wire order.
    package var address: [UInt8]
    package var sessionID: UInt32
    package var configID: UInt8
    package var channel: UInt8
    package var preambleIndex: UInt8
    package var intervalMilliseconds: UInt16
    package var slotDurationMilliseconds: UInt8
    package var sessionKey: [UInt8]
    /// Two octets, as sent. Informational: the board's region is the rig's configuration.
    package var countryCode: [UInt8]
    /// The role the responder (this side) takes.
    package var role: UWBDeviceRole
    package var mode: UWBDeviceMode

    /// The body without the key: 17 octets (the size octet's 19 less its two header octets).
    package static let fixedBodySize = 17

    package init(
        address: [UInt8], sessionID: UInt32, configID: UInt8, channel: UInt8, preambleIndex: UInt8,
        intervalMilliseconds: UInt16, slotDurationMilliseconds: UInt8, sessionKey: [UInt8], countryCode: [UInt8],
        role: UWBDeviceRole, mode: UWBDeviceMode
    ) {
        precondition(address.count == 2 && countryCode.count == 2, "2-octet address and country code")
        precondition(sessionKey.count <= 255 - 2 - Self.fixedBodySize, "the block's size octet bounds the key")
        self.address = address
        self.sessionID = sessionID
        self.configID = configID
        self.channel = channel
        self.preambleIndex = preambleIndex
        self.intervalMilliseconds = intervalMilliseconds
        self.slotDurationMilliseconds = slotDurationMilliseconds
        self.sessionKey = sessionKey
        self.countryCode = countryCode
        self.role = role
        self.mode = mode
    }

    /// Reads a whole block body: its key length must account for every octet.
    init(body: [UInt8]) throws(OOBMessageError) {
        var reader = LittleEndianReader<OOBMessageError>(body, context: "UWB configuration")
        address = try reader.bytes(2, "UWB address")
        sessionID = try reader.u32("session id")
        configID = try reader.u8("config id")
        channel = try reader.u8("channel")
        preambleIndex = try reader.u8("preamble index")
        intervalMilliseconds = try reader.u16("ranging interval")
        slotDurationMilliseconds = try reader.u8("slot duration")
        let keyLength = Int(try reader.u8("session key length"))
        sessionKey = try reader.bytes(keyLength, "session key")
        countryCode = try reader.bytes(2, "country code")
        let roleOctet = try reader.u8("device role")
        guard let role = UWBDeviceRole(rawValue: roleOctet) else { throw .invalidValue(field: "UWB device role", value: roleOctet) }
        self.role = role
        let modeOctet = try reader.u8("device mode")
        guard let mode = UWBDeviceMode(rawValue: modeOctet) else { throw .invalidValue(field: "UWB device mode", value: modeOctet) }
        self.mode = mode
        guard reader.remaining == 0 else { throw .blockSizeMismatch(.uwb, size: body.count + 2, expected: Self.fixedBodySize + keyLength + 2) }
    }

    var body: [UInt8] {
        var octets = address
        octets.appendLE(sessionID)
        octets += [configID, channel, preambleIndex]
        octets.appendLE(intervalMilliseconds)
        octets.append(slotDurationMilliseconds)
        octets.append(UInt8(sessionKey.count))
        octets += sessionKey + countryCode
        octets += [role.rawValue, mode.rawValue]
        return octets
    }
}
