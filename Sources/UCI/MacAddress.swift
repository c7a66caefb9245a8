import ByteCoding

/// A UWB MAC address: 2 octets (short) or 8 octets (extended), little-endian on the wire.
package enum MacAddress: Hashable, Sendable, CustomStringConvertible {
    case short(UInt16)
    case extended(UInt64)

    /// Wire octets, least significant first.
    var octets: [UInt8] {
        switch self {
        case .short(let value): value.littleEndianBytes
        case .extended(let value): value.littleEndianBytes
        }
    }

    init(shortOctets octets: [UInt8]) {
        self = .short(UInt16(octets[0]) | UInt16(octets[1]) << 8)
    }

    init(extendedOctets octets: [UInt8]) {
        self = .extended(octets.reversed().reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// Hex of the wire octets in wire order, "5F:DD": the form Android and pica print.
    package var description: String {
        octets.map { hex($0).dropFirst(2) }.joined(separator: ":")
    }
}
