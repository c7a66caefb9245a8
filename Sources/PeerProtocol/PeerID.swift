import ByteCoding
/// A peer's random 64-bit identity. Lower ids initiate: that one comparison decides who connects
/// over BLE and who is the UWB controller, so two peers never open duplicate connections.
package struct PeerID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }

    package static func < (lhs: PeerID, rhs: PeerID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// 16 lower-case hex digits, the form used in events.
    package var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Bounded little-endian reads over one peer message; `context` names it in error text.
typealias ByteReader = LittleEndianReader<PeerProtocolError>

extension LittleEndianReader where Failure == PeerProtocolError {
    func expectEnd() throws(PeerProtocolError) {
        if remaining != 0 { throw .trailingBytes(what: context, count: remaining) }
    }
}
