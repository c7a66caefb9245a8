import ByteCoding
/// One packet on the kernel's Bluetooth management channel (HCI_CHANNEL_CONTROL): commands from
/// us, replies and events from the kernel. Layout (bluez doc/mgmt-protocol.rst, "Packet
/// Structures"): opcode or event code u16, controller index u16 (0xFFFF = none), parameter
/// length u16, parameters; all little-endian. One packet per socket read.
package struct MgmtPacket: Equatable, Sendable {
    package static let noController: UInt16 = 0xFFFF
    package static let headerSize = 6

    package var code: UInt16
    package var index: UInt16
    package var parameters: [UInt8]

    package init(code: UInt16, index: UInt16, parameters: [UInt8] = []) {
        self.code = code
        self.index = index
        self.parameters = parameters
    }

    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize + parameters.count)
        bytes.appendLE(code)
        bytes.appendLE(index)
        bytes.appendLE(UInt16(parameters.count))
        return bytes + parameters
    }

    /// Decodes one datagram; the length field must match exactly.
    package init(datagram: [UInt8]) throws(MgmtError) {
        var reader = Reader(datagram, context: "mgmt header")
        code = try reader.u16("code")
        index = try reader.u16("index")
        let length = Int(try reader.u16("length"))
        guard length == reader.remaining else {
            throw .lengthMismatch(what: "mgmt packet", declared: length, actual: reader.remaining)
        }
        parameters = Array(try reader.take(length, "parameters"))
    }
}

package enum MgmtError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(what: String, needed: Int, available: Int)
    case lengthMismatch(what: String, declared: Int, actual: Int)
    case unexpected(String)

    package var description: String {
        switch self {
        case .truncated(let what, let needed, let available): "\(what) truncated: needs \(needed) bytes, has \(available)"
        case .lengthMismatch(let what, let declared, let actual): "\(what) says \(declared) bytes but carries \(actual)"
        case .unexpected(let why): why
        }
    }
}

/// Bounded little-endian reads over one mgmt packet; `context` names it in error text.
typealias Reader = LittleEndianReader<MgmtError>

extension MgmtError: TruncationError {
    package static func truncated(context: String, field: String, needed: Int, available: Int) -> MgmtError {
        .truncated(what: "\(context) \(field)", needed: needed, available: available)
    }
}
