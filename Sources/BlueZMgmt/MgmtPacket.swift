/// One packet on the kernel's Bluetooth management channel (HCI_CHANNEL_CONTROL): commands from
/// us, replies and events from the kernel. Layout (bluez doc/mgmt-protocol.rst, "Packet
/// Structures"): opcode or event code u16, controller index u16 (0xFFFF = none), parameter
/// length u16, parameters; all little-endian. One packet per socket read.
public struct MgmtPacket: Equatable, Sendable {
    public static let noController: UInt16 = 0xFFFF
    public static let headerSize = 6

    public var code: UInt16
    public var index: UInt16
    public var parameters: [UInt8]

    public init(code: UInt16, index: UInt16, parameters: [UInt8] = []) {
        self.code = code
        self.index = index
        self.parameters = parameters
    }

    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize + parameters.count)
        bytes.appendLE(code)
        bytes.appendLE(index)
        bytes.appendLE(UInt16(parameters.count))
        return bytes + parameters
    }

    /// Decodes one datagram; the length field must match exactly.
    public init(datagram: [UInt8]) throws(MgmtError) {
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

public enum MgmtError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(what: String, needed: Int, available: Int)
    case lengthMismatch(what: String, declared: Int, actual: Int)
    case unexpected(String)

    public var description: String {
        switch self {
        case .truncated(let what, let needed, let available): "\(what) truncated: needs \(needed) bytes, has \(available)"
        case .lengthMismatch(let what, let declared, let actual): "\(what) says \(declared) bytes but carries \(actual)"
        case .unexpected(let why): why
        }
    }
}

/// Bounds-checked little-endian reading for this module's decoders.
struct Reader {
    private let bytes: ArraySlice<UInt8>
    private var offset: Int
    let context: String

    init(_ bytes: some Collection<UInt8>, context: String) {
        self.bytes = ArraySlice(bytes)
        self.offset = self.bytes.startIndex
        self.context = context
    }

    var remaining: Int { bytes.endIndex - offset }

    mutating func take(_ count: Int, _ field: String) throws(MgmtError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else {
            throw .truncated(what: "\(context) \(field)", needed: count, available: remaining)
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8(_ field: String) throws(MgmtError) -> UInt8 { try take(1, field).first! }

    mutating func u16(_ field: String) throws(MgmtError) -> UInt16 {
        let b = try take(2, field)
        return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
    }

    mutating func u32(_ field: String) throws(MgmtError) -> UInt32 {
        let b = Array(try take(4, field))
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.endIndex }
        return Array(bytes[offset...])
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        for shift in 0..<MemoryLayout<T>.size { append(UInt8(truncatingIfNeeded: value >> (8 * shift))) }
    }
}
