import BLE
import Capture
import GATTServer
import UCI

/// One node's recorded traffic, split into what replay feeds back: responses (handed out as the
/// node sends each command), notifications and BLE events (delivered on the recorded timeline),
/// and the link id each of the node's own connection attempts got.
struct CapturedNode {
    enum Input {
        case uci([UInt8])
        case ble(BLEEvent)
        /// A phone's ATT traffic (`CapturingGATTBackend`), for the node's GATT backend.
        case gatt(GATTClientEvent)
    }

    var responses: [[UInt8]] = []
    var timeline: [(microseconds: Int64, input: Input)] = []
    var localLinks: [LinkID] = []
    /// When the node's first record was written (its bring-up's command), replay's start.
    var firstMicroseconds: Int64?
    /// The first frame the node sent on each link: on a keyed node, its Noise handshake message
    /// (an ephemeral key drawn from the key seed), which a replay must send again byte for byte.
    var firstSent: [LinkID: [UInt8]] = [:]

    init(uciPcap: String, blePcap: String, gatt: GATTDatabase?) throws {
        try self.init(uci: PcapReader.read(uciPcap).records, ble: PcapReader.read(blePcap).records, gatt: gatt)
    }

    /// From the records of the node's `uci.pcap` and `ble.pcap` (H4 HCI packets with the
    /// direction in front, as `CapturingBLEAdapter` writes them); records that are none of
    /// what replay feeds back (commands, their completions, L2CAP signalling), or too short to
    /// be, are skipped. Handles from 0x0E00 are phones' GATT connections: what the phone sent on
    /// their ATT channel becomes `GATTClientEvent`s, read with `gatt`, the database the node served
    /// (none: they are skipped).
    init(uci: [PcapReader.Record], ble: [PcapReader.Record], gatt: GATTDatabase? = nil) {
        firstMicroseconds = (uci + ble).map(\.microseconds).min()
        var lastCommandAt: Int64?
        for record in uci where !record.bytes.isEmpty {
            switch record.bytes[0] >> 5 {
            case 1: lastCommandAt = record.microseconds
            case 2: responses.append(record.bytes)
            case 3 where record.microseconds == lastCommandAt && !responses.isEmpty:
                // Sent with a command's response, at its time (a virtual board answers both at
                // once: a session's status change): it comes back with that response, after the
                // command, not before it with the step's earlier notifications.
                responses[responses.count - 1] += record.bytes
            case 3: timeline.append((record.microseconds, .uci(record.bytes)))
            default: break  // data packets
            }
        }
        var opened: Set<LinkID> = []
        var disconnected: Set<LinkID> = []
        var sentSDUs = SDUReassembler()
        var receivedSDUs = SDUReassembler()
        var pendingScanResponse: (BLEAddress, Int, [UInt8], Int64)?
        func flushAdvert() {
            if let (address, rssi, data, time) = pendingScanResponse {
                timeline.append((time, .ble(.advertisement(address, rssi: rssi, data: data))))
                pendingScanResponse = nil
            }
        }
        for record in ble {
            let b = record.bytes
            guard b.count >= 5 else { continue }
            let h4 = Array(b.dropFirst(4))
            guard b[3] == 1 else {
                // Sent: only the first SDU on each link is kept, to check the replay by, and
                // which links the node itself disconnected (HCI_Disconnect, opcode 0x0406).
                if h4[0] == 0x02, let (link, sdu) = sentSDUs.add(h4), firstSent[link] == nil { firstSent[link] = sdu }
                if h4.count >= 6, h4[0] == 0x01, h4[1] == 0x06, h4[2] == 0x04 { disconnected.insert(LinkID(UInt16(h4[4]) | UInt16(h4[5]) << 8)) }
                continue
            }
            if let handle = Self.phoneHandle(h4) {
                if let event = Self.phoneEvent(h4, handle: handle, database: gatt) { timeline.append((record.microseconds, .gatt(event))) }
                continue
            }
            switch (h4[0], h4.count > 1 ? h4[1] : 0) {
            case (0x04, 0x3E) where h4.count > 3 && h4[3] == 0x02 && h4.count >= 15:
                let type = h4[5]
                let address = BLEAddress(bytes: Array(h4[7..<13]))
                let length = Int(h4[13])
                guard h4.count >= 14 + length + 1 else { continue }
                let data = Array(h4[14..<(14 + length)])
                let rssi = Int(Int8(bitPattern: h4[14 + length]))
                if type == 0x04, let pending = pendingScanResponse, pending.0 == address {
                    pendingScanResponse = (address, pending.1, pending.2 + data, pending.3)  // scan response joins its advert
                    flushAdvert()
                } else {
                    flushAdvert()
                    pendingScanResponse = (address, rssi, data, record.microseconds)
                }
            case (0x04, 0x3E) where h4.count >= 22 && h4[3] == 0x01 && h4[4] != 0x00:
                // A connection never made: our connect, failed or cancelled.
                flushAdvert()
                let link = LinkID(UInt16(h4[5]) | UInt16(h4[6]) << 8)
                if !opened.contains(link) { localLinks.append(link) }
                timeline.append((record.microseconds, .ble(.linkClosed(link))))
            case (0x04, 0x3E) where h4.count >= 22 && h4[3] == 0x01:
                flushAdvert()
                let link = LinkID(UInt16(h4[5]) | UInt16(h4[6]) << 8)
                let local = h4[7] == 0x00
                opened.insert(link)
                if local { localLinks.append(link) }
                timeline.append((record.microseconds, .ble(.linkOpened(link, peer: BLEAddress(bytes: Array(h4[9..<15])), initiatedLocally: local))))
            case (0x02, _):
                flushAdvert()
                if let (link, sdu) = receivedSDUs.add(h4) { timeline.append((record.microseconds, .ble(.linkData(link, sdu)))) }
            case (0x04, 0x05) where h4.count >= 7:
                flushAdvert()
                let link = LinkID(UInt16(h4[4]) | UInt16(h4[5]) << 8)
                if !opened.contains(link) { localLinks.append(link) }  // our connect that never opened (older captures)
                // The end of a link the node disconnected itself: its adapter never told it.
                // Delivered, it reached the node in the step it disconnected, before its tick did.
                guard !disconnected.contains(link) else { continue }
                timeline.append((record.microseconds, .ble(.linkClosed(link))))
            default:
                continue
            }
        }
        flushAdvert()
        // One timeline in recorded order; at equal times UCI first, as the simulation delivered.
        timeline = timeline.enumerated().sorted { a, b in
            if a.element.microseconds != b.element.microseconds { return a.element.microseconds < b.element.microseconds }
            let aUCI = if case .uci = a.element.input { true } else { false }
            let bUCI = if case .uci = b.element.input { true } else { false }
            return aUCI != bUCI ? aUCI : a.offset < b.offset
        }.map(\.element)
    }

    /// The handle of a packet on a phone's connection (0x0E00–0x0EFF: an ACL packet, its LE
    /// Connection Complete or Disconnection Complete); nil for any other packet.
    private static func phoneHandle(_ h4: [UInt8]) -> UInt16? {
        let handle: UInt16
        switch (h4.first, h4.count > 1 ? h4[1] : 0) {
        case (0x02, _) where h4.count >= 9: handle = (UInt16(h4[1]) | UInt16(h4[2]) << 8) & 0x0FFF
        case (0x04, 0x3E) where h4.count >= 7 && h4[3] == 0x01: handle = UInt16(h4[5]) | UInt16(h4[6]) << 8
        case (0x04, 0x05) where h4.count >= 7: handle = UInt16(h4[4]) | UInt16(h4[5]) << 8
        default: return nil
        }
        return (0x0E00...0x0EFF).contains(handle) ? handle : nil
    }

    /// What the phone's packet told the node's GATT backend: its close, a write of a value or of
    /// a client configuration (read with `database`, the one the node served); nil for the rest
    /// (its connection opening, the node's own answers).
    private static func phoneEvent(_ h4: [UInt8], handle: UInt16, database: GATTDatabase?) -> GATTClientEvent? {
        let client = GATTClient("capture:\(handle)")
        guard h4[0] == 0x02 else { return h4[1] == 0x05 ? .closed(client) : nil }
        let cid = UInt16(h4[7]) | UInt16(h4[8]) << 8
        let pdu = Array(h4.dropFirst(9))
        guard cid == 0x0004, let database, pdu.count >= 3, [0x12, 0x52].contains(pdu[0]) else { return nil }
        let target = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
        let value = Array(pdu.dropFirst(3))
        if let written = database.characteristics.first(where: { $0.valueHandle == target }) {
            return .client(client, .write(characteristic: written.uuid, valueHandle: target, value: value, withResponse: pdu[0] == 0x12))
        }
        if let configured = database.characteristics.first(where: { $0.configurationHandle == target }), value.count == 2 {
            return .client(client, .subscription(characteristic: configured.uuid, GATTClientConfiguration(rawValue: UInt16(value[0]) | UInt16(value[1]) << 8)))
        }
        return nil
    }
}
