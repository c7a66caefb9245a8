import BLE

/// Joins the K-frames of LE credit-based channels in `ble.pcap` back into SDUs, per link (Vol 3
/// Part A §3.4.3: the first K-frame of an SDU starts with its length). One direction each.
struct SDUReassembler {
    private var partial: [LinkID: (length: Int, bytes: [UInt8])] = [:]

    /// The link and SDU an ACL packet (H4, type 0x02) completes, if any. Frames on the fixed
    /// channels (signalling, CID 0x0005) are no SDUs: nil.
    mutating func add(_ h4: [UInt8]) -> (LinkID, [UInt8])? {
        guard h4.count >= 9 else { return nil }
        let link = LinkID((UInt16(h4[1]) | UInt16(h4[2]) << 8) & 0x0EFF)
        let cid = UInt16(h4[7]) | UInt16(h4[8]) << 8
        guard cid >= 0x0040 else { return nil }
        let payload = h4.dropFirst(9)
        var sdu: (length: Int, bytes: [UInt8])
        if let started = partial.removeValue(forKey: link) {
            sdu = started
            sdu.bytes += payload
        } else {
            guard payload.count >= 2 else { return nil }
            sdu = (Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8, Array(payload.dropFirst(2)))
        }
        guard sdu.bytes.count >= sdu.length else {
            partial[link] = sdu
            return nil
        }
        return (link, sdu.bytes)
    }
}
