import BLE

/// The world's virtual air over TCP, so a bridge in another process can discover and talk to the
/// world's peers with its own BLE code path. Frames: `type u8 | length u16 LE | payload`.
///
/// Client -> world: `hello(body name)`, `advertise(data)`, `scan`, `connect(address)`,
/// `send(link u32, sdu)`, `disconnect(link u32)`, `privacy(IRK, 16 octets, most significant
/// first)`: from now on the body advertises and connects from resolvable private addresses of
/// that key, as a keyed rig's kernel does (`World.givePrivacy`).
/// World -> client: `welcome(address)`, `connected(link u32)` (reply to connect),
/// `event(BLE event)`, `failure(text)`.
enum AirFrame: Equatable {
    case hello(body: String)
    case advertise([UInt8])
    case scan
    case connect(BLEAddress)
    case send(LinkID, [UInt8])
    case disconnect(LinkID)
    case privacy([UInt8])
    case welcome(BLEAddress)
    case connected(LinkID)
    case event(BLEEvent)
    case failure(String)

    static let maxPayload = 4096

    enum Invalid: Error, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(String)
        var description: String {
            switch self {
            case .tooLarge(let n): "air frame of \(n) bytes exceeds \(AirFrame.maxPayload)"
            case .malformed(let why): "malformed air frame: \(why)"
            }
        }
    }

    func encoded() -> [UInt8] {
        var p: [UInt8] = []
        let type: UInt8
        switch self {
        case .hello(let body): type = 0x01; p = Array(body.utf8)
        case .advertise(let data): type = 0x02; p = data
        case .scan: type = 0x03
        case .connect(let address): type = 0x04; p = address.bytes
        case .send(let link, let sdu): type = 0x05; p = Self.u32(link) + sdu
        case .disconnect(let link): type = 0x06; p = Self.u32(link)
        case .privacy(let irk): type = 0x07; p = irk
        case .welcome(let address): type = 0x81; p = address.bytes
        case .connected(let link): type = 0x82; p = Self.u32(link)
        case .event(.advertisement(let address, let rssi, let data)):
            type = 0x83; p = address.bytes + [UInt8(bitPattern: Int8(clamping: rssi))] + data
        case .event(.linkOpened(let link, let peer, let local)):
            type = 0x84; p = Self.u32(link) + peer.bytes + [local ? 1 : 0]
        case .event(.linkData(let link, let sdu)): type = 0x85; p = Self.u32(link) + sdu
        case .event(.linkClosed(let link)): type = 0x86; p = Self.u32(link)
        case .event(.adapterPowered(let on)): type = 0x87; p = [on ? 1 : 0]
        case .event(.connectRefused(let link)): type = 0x88; p = Self.u32(link)
        case .failure(let text): type = 0x8F; p = Array(text.utf8)
        }
        return [type, UInt8(p.count & 0xFF), UInt8(p.count >> 8)] + p
    }

    /// Pops one frame from the front of `buffer`, or returns nil if it is incomplete.
    static func next(from buffer: inout [UInt8]) throws(Invalid) -> AirFrame? {
        guard buffer.count >= 3 else { return nil }
        let length = Int(buffer[1]) | Int(buffer[2]) << 8
        guard length <= maxPayload else { throw .tooLarge(length) }
        guard buffer.count >= 3 + length else { return nil }
        let type = buffer[0]
        let p = Array(buffer[3..<(3 + length)])
        buffer.removeFirst(3 + length)
        func address(_ at: Int) throws(Invalid) -> BLEAddress {
            guard p.count >= at + 6 else { throw .malformed("short address") }
            return BLEAddress(bytes: Array(p[at..<(at + 6)]))
        }
        func link() throws(Invalid) -> LinkID {
            guard p.count >= 4 else { throw .malformed("short link id") }
            return LinkID(p[0]) | LinkID(p[1]) << 8 | LinkID(p[2]) << 16 | LinkID(p[3]) << 24
        }
        switch type {
        case 0x01: return .hello(body: String(decoding: p, as: UTF8.self))
        case 0x02: return .advertise(p)
        case 0x03: return .scan
        case 0x04: return .connect(try address(0))
        case 0x05: return .send(try link(), Array(p.dropFirst(4)))
        case 0x06: return .disconnect(try link())
        case 0x07:
            guard p.count == 16 else { throw .malformed("identity resolving key size \(p.count)") }
            return .privacy(p)
        case 0x81: return .welcome(try address(0))
        case 0x82: return .connected(try link())
        case 0x83:
            guard p.count >= 7 else { throw .malformed("short advertisement") }
            return .event(.advertisement(try address(0), rssi: Int(Int8(bitPattern: p[6])), data: Array(p.dropFirst(7))))
        case 0x84:
            guard p.count == 11 else { throw .malformed("link-opened size \(p.count)") }
            return .event(.linkOpened(try link(), peer: try address(4), initiatedLocally: p[10] != 0))
        case 0x85: return .event(.linkData(try link(), Array(p.dropFirst(4))))
        case 0x86: return .event(.linkClosed(try link()))
        case 0x87:
            guard p.count == 1 else { throw .malformed("adapter-powered size \(p.count)") }
            return .event(.adapterPowered(p[0] != 0))
        case 0x88: return .event(.connectRefused(try link()))
        case 0x8F: return .failure(String(decoding: p, as: UTF8.self))
        default: throw .malformed("unknown type 0x\(String(type, radix: 16))")
        }
    }

    private static func u32(_ v: UInt32) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
    }
}
