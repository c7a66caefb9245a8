import ByteCoding

/// The UWB block of a Ranging Capability Response: what the responder's UWB side can do. Layout
/// after the block's technology id (0x0) and size octets (the PDL's `UwbCapabilities`; the size
/// counts the two header octets too, `_payload_: [+2]`, so it is 20 = 0x14):
///
///     0  UWB address (2, as sent)     2  channels bitmap (4)      6  preamble indexes bitmap (4)
///     10 config ids bitmap (4)        14 minimum ranging interval, ms (2)
///     16 minimum slot duration, ms (1)                            17 roles bitmap (1)
///
/// The bitmaps are little-endian 32-bit fields. Channel n is bit n and config id n is bit n;
/// preamble index n is bit n − 1 (AOSP's `UwbOobCapabilities` shifts preambles by one and nothing
/// else; the PDL gives only the widths). Values a bitmap cannot hold are not representable, so
/// a value built here encodes exactly what its arrays say.
package struct UWBCapability: Equatable, Sendable {
    /// The responder's short UWB address, in the order it goes on the wire.
    package var address: [UInt8]
    /// Channels, ascending, each 0...31.
    package var channels: [UInt8]
    /// Preamble indexes, ascending, each 1...32.
    package var preambleIndexes: [UInt8]
    /// FiRa/Android config ids, ascending, each 0...31 (1 is CONFIG_UNICAST_DS_TWR).
    package var configIDs: [UInt8]
    package var minimumIntervalMilliseconds: UInt16
    package var minimumSlotDurationMilliseconds: UInt8
    package var roles: UWBRoles

    /// The block's body size; with the two header octets it is the size octet's 20.
    package static let bodySize = 18

    package init(
        address: [UInt8], channels: [UInt8], preambleIndexes: [UInt8], configIDs: [UInt8],
        minimumIntervalMilliseconds: UInt16, minimumSlotDurationMilliseconds: UInt8, roles: UWBRoles
    ) {
        precondition(address.count == 2, "a UWB short address is 2 octets")
        precondition(channels.allSatisfy { $0 < 32 } && configIDs.allSatisfy { $0 < 32 }, "a bitmap holds 0...31")
        precondition(preambleIndexes.allSatisfy { (1...32).contains($0) }, "the preamble bitmap holds 1...32")
        self.address = address
        self.channels = Array(Set(channels)).sorted()
        self.preambleIndexes = Array(Set(preambleIndexes)).sorted()
        self.configIDs = Array(Set(configIDs)).sorted()
        self.minimumIntervalMilliseconds = minimumIntervalMilliseconds
        self.minimumSlotDurationMilliseconds = minimumSlotDurationMilliseconds
        self.roles = roles
    }

    /// Reads a body of exactly `bodySize` octets (the caller has checked the size).
    init(body: [UInt8]) throws(OOBMessageError) {
        var reader = LittleEndianReader<OOBMessageError>(body, context: "UWB capability")
        address = try reader.bytes(2, "UWB address")
        channels = Self.members(of: try reader.u32("channels"), offset: 0)
        preambleIndexes = Self.members(of: try reader.u32("preamble indexes"), offset: 1)
        configIDs = Self.members(of: try reader.u32("config ids"), offset: 0)
        minimumIntervalMilliseconds = try reader.u16("minimum ranging interval")
        minimumSlotDurationMilliseconds = try reader.u8("minimum slot duration")
        let roleBits = try reader.u8("roles")
        roles = UWBRoles(rawValue: roleBits)
        guard UWBRoles.assigned.isSuperset(of: roles) else { throw .reservedBits(field: "UWB roles", value: UInt16(roleBits)) }
    }

    var body: [UInt8] {
        var octets = address
        octets.appendLE(Self.bitmap(channels, offset: 0))
        octets.appendLE(Self.bitmap(preambleIndexes, offset: 1))
        octets.appendLE(Self.bitmap(configIDs, offset: 0))
        octets.appendLE(minimumIntervalMilliseconds)
        octets.append(minimumSlotDurationMilliseconds)
        octets.append(roles.rawValue)
        return octets
    }

    /// Bit (v − offset) for each value v.
    static func bitmap(_ values: [UInt8], offset: UInt8) -> UInt32 {
        values.reduce(0) { $0 | 1 << UInt32($1 - offset) }
    }

    /// The values whose bits are set, ascending.
    static func members(of bitmap: UInt32, offset: UInt8) -> [UInt8] {
        (0..<32).filter { bitmap >> $0 & 1 == 1 }.map { UInt8($0) + offset }
    }
}
