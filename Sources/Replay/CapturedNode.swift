import BLE
import Capture
import UCI

/// One node's recorded traffic, split into what replay feeds back: responses (handed out as the
/// node sends each command), notifications and BLE events (delivered on the recorded timeline),
/// and the link id each of the node's own connection attempts got.
struct CapturedNode {
    enum Input {
        case uci([UInt8])
        case ble(BLEEvent)
    }

    var responses: [[UInt8]] = []
    var timeline: [(microseconds: Int64, input: Input)] = []
    var localLinks: [LinkID] = []
    /// The first frame the node sent on each link: on a keyed node, its Noise handshake message
    /// (an ephemeral key drawn from the key seed), which a replay must send again byte for byte.
    var firstSent: [LinkID: [UInt8]] = [:]

    init(uciPcap: String, blePcap: String) throws {
        try self.init(uci: PcapReader.read(uciPcap).records, ble: PcapReader.read(blePcap).records)
    }

    /// From the records of the node's `uci.pcap` and `ble.pcap` (H4 HCI packets with the
    /// direction in front, as `CapturingBLEAdapter` writes them); records that are none of
    /// what replay feeds back (commands, their completions, L2CAP signalling), or too short to
    /// be, are skipped.
    init(uci: [PcapReader.Record], ble: [PcapReader.Record]) {
        for record in uci where !record.bytes.isEmpty {
            switch record.bytes[0] >> 5 {
            case 2: responses.append(record.bytes)
            case 3: timeline.append((record.microseconds, .uci(record.bytes)))
            default: break  // our own commands, and data packets
            }
        }
        var opened: Set<LinkID> = []
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
                // Sent: only the first SDU on each link is kept, to check the replay by.
                if h4[0] == 0x02, let (link, sdu) = sentSDUs.add(h4), firstSent[link] == nil { firstSent[link] = sdu }
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
}
