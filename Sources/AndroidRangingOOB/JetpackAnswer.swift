import ByteCoding

/// The rig's notification on the `jetpack` characteristic, after the Jetpack header
/// (`JetpackRequest`: 0x4A, version 1, kind):
///
/// | kind | octets after the header | meaning |
/// |---|---|---|
/// | 0x81 accepted | the rig's UWB short address (2, wire order), the rig's role (1: 0 controlee, 1 controller), channel (1), preamble index (1) | the parameters run; 8 octets in all |
/// | 0x82 stopped | reason (1, `JetpackReasonCode`: 0x00 asked, 0x10 board failed, 0x11 board stopped) | no session runs any more; 4 octets |
/// | 0x83 refused | reason (1, `JetpackReasonCode`) | the write changed nothing; 4 octets |
///
/// Accepted is sent as soon as the parameters pass the board check, before the board has started:
/// the app needs the rig's address for its `peerDevices` (and, as a controlee, the rig's complex
/// channel) before it can call `prepareSession`, and the rig's board starts meanwhile. The
/// channel and preamble are the session's whichever side chose them. Every answer fits the 20
/// octets of a notification at the default ATT_MTU.
package enum JetpackAnswer: Equatable, Sendable {
    case accepted(rigAddress: [UInt8], rigRole: JetpackRole, channel: UInt8, preambleIndex: UInt8)
    case stopped(JetpackReasonCode)
    case refused(JetpackReasonCode)

    package static let acceptedKind: UInt8 = 0x81
    package static let stoppedKind: UInt8 = 0x82
    package static let refusedKind: UInt8 = 0x83

    package var encoded: [UInt8] {
        let header = [JetpackRequest.magic, JetpackRequest.version]
        switch self {
        case let .accepted(address, role, channel, preambleIndex):
            return header + [Self.acceptedKind] + address + [role.rawValue, channel, preambleIndex]
        case .stopped(let reason): return header + [Self.stoppedKind, reason.rawValue]
        case .refused(let reason): return header + [Self.refusedKind, reason.rawValue]
        }
    }

    /// Reads one notification (what a phone app, or a test playing one, does with it).
    package init(_ bytes: some Collection<UInt8>) throws(JetpackMessageError) {
        var reader = LittleEndianReader<JetpackMessageError>(bytes, context: "Jetpack answer")
        let kind = try JetpackRequest.header(&reader)
        switch kind {
        case Self.acceptedKind:
            let address = try reader.bytes(2, "UWB address")
            let roleOctet = try reader.u8("role")
            guard let role = JetpackRole(rawValue: roleOctet) else { throw .invalidValue(field: "role", value: roleOctet) }
            let channel = try reader.u8("channel")
            let preambleIndex = try reader.u8("preamble index")
            self = .accepted(rigAddress: address, rigRole: role, channel: channel, preambleIndex: preambleIndex)
        case Self.stoppedKind, Self.refusedKind:
            let octet = try reader.u8("reason")
            guard let reason = JetpackReasonCode(rawValue: octet) else { throw .invalidValue(field: "reason", value: octet) }
            self = kind == Self.stoppedKind ? .stopped(reason) : .refused(reason)
        default:
            throw .unknownKind(kind)
        }
        guard reader.remaining == 0 else { throw .trailingOctets(kind: "answer", count: reader.remaining) }
    }
}
