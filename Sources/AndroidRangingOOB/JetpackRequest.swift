import ByteCoding

/// One write of a Jetpack phone app on the rig's `jetpack` characteristic: its parameters, or a
/// stop. Every message of the Jetpack layout, either way, starts with the same 3-octet header:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | magic 0x4A ('J'), so a write meant for another protocol is refused at once |
/// | 1 | 1 | layout version, 1 |
/// | 2 | 1 | kind: 0x01 parameters, 0x02 stop (phone → rig); 0x81-0x83 the rig's answers |
///
/// Parameters (28 octets with a static STS key) are laid out in `JetpackParameters`; a stop is
/// the header alone, `4A 01 02`. The rig answers each with a `JetpackAnswer` notification. One
/// write is one message; octets after the last field are refused, as is any kind the phone does
/// not send.
package enum JetpackRequest: Equatable, Sendable {
    /// Start a session with these parameters.
    case parameters(JetpackParameters)
    /// Stop the session (or confirm that none runs).
    case stop

    package static let magic: UInt8 = 0x4A
    package static let version: UInt8 = 1
    package static let parametersKind: UInt8 = 0x01
    package static let stopKind: UInt8 = 0x02

    package var encoded: [UInt8] {
        switch self {
        case .parameters(let parameters): [Self.magic, Self.version, Self.parametersKind] + parameters.body
        case .stop: [Self.magic, Self.version, Self.stopKind]
        }
    }

    /// Reads one whole write; any input gets a request or a `JetpackMessageError`.
    package init(_ bytes: some Collection<UInt8>) throws(JetpackMessageError) {
        var reader = LittleEndianReader<JetpackMessageError>(bytes, context: "Jetpack message")
        let kind = try Self.header(&reader)
        switch kind {
        case Self.parametersKind:
            reader = LittleEndianReader(Array(bytes.dropFirst(3)), context: "Jetpack parameters")
            self = .parameters(try JetpackParameters(reading: &reader))
            guard reader.remaining == 0 else { throw .trailingOctets(kind: "parameters", count: reader.remaining) }
        case Self.stopKind:
            self = .stop
            guard reader.remaining == 0 else { throw .trailingOctets(kind: "stop", count: reader.remaining) }
        default:
            throw .unknownKind(kind)
        }
    }

    /// Reads the magic and version and returns the kind octet.
    static func header(_ reader: inout LittleEndianReader<JetpackMessageError>) throws(JetpackMessageError) -> UInt8 {
        let magic = try reader.u8("magic")
        guard magic == Self.magic else { throw .notJetpack(magic) }
        let version = try reader.u8("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        return try reader.u8("kind")
    }
}
