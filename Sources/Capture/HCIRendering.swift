import BLE
import ByteCoding

/// H4 renderings of what an adapter did (Core Spec Vol 4 Part E §5.4, §7.1, §7.7, §7.8; Vol 3
/// Part A §3, §4): each function gives whole H4 packets, without the pcap direction word.
enum HCIRendering {
    static func direction(sent: Bool) -> [UInt8] { [0, 0, 0, sent ? 0 : 1] }

    static func advertisingReport(type: UInt8, address: BLEAddress, data: [UInt8], rssi: Int) -> [UInt8] {
        let body: [UInt8] = [0x02, 0x01, type, 0x01] + address.bytes + [UInt8(data.count)] + data
            + [UInt8(bitPattern: Int8(clamping: rssi))]
        return [0x04, 0x3E, UInt8(body.count)] + body
    }

    /// The reports of one received advert: its advertising data, then its scan response.
    static func advertisingReports(address: BLEAddress, rssi: Int, data: [UInt8]) -> [[UInt8]] {
        let (advertising, scanResponse) = AdvertisingData(data).split()
        var reports = [advertisingReport(type: 0x00, address: address, data: advertising, rssi: rssi)]
        if !scanResponse.isEmpty { reports.append(advertisingReport(type: 0x04, address: address, data: scanResponse, rssi: rssi)) }
        return reports
    }

    /// LE Connection Complete (§7.7.65.1) with the kernel's requested parameters: interval
    /// 0x0018 (30 ms, its minimum), latency 0, supervision timeout 0x002A (420 ms). `status`
    /// other than 0: the connection was never made (the handle is still our link id).
    static func connectionComplete(link: LinkID, peer: BLEAddress, central: Bool, status: UInt8 = 0) -> [UInt8] {
        var body: [UInt8] = [0x01, status]
        body.appendLE(handle(link))
        body += [central ? 0x00 : 0x01, 0x01] + peer.bytes
        body.appendLE(UInt16(0x0018))
        body.appendLE(UInt16(0))
        body.appendLE(UInt16(0x002A))
        body.append(0x00)
        return [0x04, 0x3E, UInt8(body.count)] + body
    }

    static func disconnectionComplete(link: LinkID, reason: UInt8) -> [UInt8] {
        var body: [UInt8] = [0x00]
        body.appendLE(handle(link))
        body.append(reason)
        return [0x04, 0x05, UInt8(body.count)] + body
    }

    // MARK: Commands and their completion events

    static func command(_ opcode: UInt16, _ parameters: [UInt8] = []) -> [UInt8] {
        var packet: [UInt8] = [0x01]
        packet.appendLE(opcode)
        return packet + [UInt8(parameters.count)] + parameters
    }

    /// Command Status (§7.7.15): one more command may be sent.
    static func commandStatus(_ opcode: UInt16, status: UInt8 = 0) -> [UInt8] {
        var packet: [UInt8] = [0x04, 0x0F, 0x04, status, 0x01]
        packet.appendLE(opcode)
        return packet
    }

    /// Command Complete (§7.7.14) whose return parameters are a status alone.
    static func commandComplete(_ opcode: UInt16, status: UInt8 = 0) -> [UInt8] {
        var packet: [UInt8] = [0x04, 0x0E, 0x04, 0x01]
        packet.appendLE(opcode)
        return packet + [status]
    }

    static let leSetAdvertisingData: UInt16 = 0x2008
    static let leSetScanResponseData: UInt16 = 0x2009
    static let leSetAdvertisingEnable: UInt16 = 0x200A
    static let leSetScanEnable: UInt16 = 0x200C
    static let leCreateConnection: UInt16 = 0x200D
    static let leCreateConnectionCancel: UInt16 = 0x200E
    static let disconnect: UInt16 = 0x0406

    /// LE Set Advertising Data / Scan Response Data (§7.8.7, §7.8.8): a length octet, then the
    /// data in a 31-octet field.
    static func dataCommand(_ opcode: UInt16, _ data: [UInt8]) -> [UInt8] {
        command(opcode, [UInt8(data.count)] + data + [UInt8](repeating: 0, count: max(0, 31 - data.count)))
    }

    /// LE Create Connection (§7.8.12) as Linux's `hci_le_create_conn_sync` fills it from its
    /// defaults (hci_core.c): scan interval and window 0x0060, no filter accept list, random
    /// peer and own address, interval 0x0018–0x0028, latency 0, supervision timeout 0x002A,
    /// CE lengths 0.
    static func createConnection(peer: BLEAddress) -> [UInt8] {
        var parameters: [UInt8] = []
        parameters.appendLE(UInt16(0x0060))
        parameters.appendLE(UInt16(0x0060))
        parameters += [0x00, 0x01] + peer.bytes + [0x01]
        for value: UInt16 in [0x0018, 0x0028, 0x0000, 0x002A, 0x0000, 0x0000] { parameters.appendLE(value) }
        return command(leCreateConnection, parameters)
    }

    /// Disconnect (§7.1.6).
    static func disconnectCommand(link: LinkID, reason: UInt8) -> [UInt8] {
        var parameters: [UInt8] = []
        parameters.appendLE(handle(link))
        return command(disconnect, parameters + [reason])
    }

    // MARK: L2CAP

    /// One ACL packet holding one whole L2CAP PDU on `cid` (§5.4.2: packet boundary 0b00 from
    /// the host, as Linux sends on LE; 0b10 from the controller).
    static func acl(link: LinkID, sent: Bool, cid: UInt16, payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x02]
        frame.appendLE(handle(link) | (sent ? 0x0000 : 0x2000))
        frame.appendLE(UInt16(payload.count + 4))
        frame.appendLE(UInt16(payload.count))
        frame.appendLE(cid)
        return frame + payload
    }

    /// An SDU as the K-frames of an LE credit-based channel (Vol 3 Part A §3.4.3): the first
    /// starts with the SDU length, and none carries more than `mps` octets.
    static func kFrames(link: LinkID, sent: Bool, cid: UInt16, sdu: [UInt8], mps: Int) -> [[UInt8]] {
        var first: [UInt8] = []
        first.appendLE(UInt16(sdu.count))
        let firstTake = min(sdu.count, mps - 2)
        var frames = [acl(link: link, sent: sent, cid: cid, payload: first + sdu[0..<firstTake])]
        var at = firstTake
        while at < sdu.count {
            let take = min(sdu.count - at, mps)
            frames.append(acl(link: link, sent: sent, cid: cid, payload: Array(sdu[at..<(at + take)])))
            at += take
        }
        return frames
    }

    /// A command on the LE signalling channel, CID 0x0005 (Vol 3 Part A §4).
    static func signalling(link: LinkID, sent: Bool, code: UInt8, identifier: UInt8, data: [UInt8]) -> [UInt8] {
        var payload: [UInt8] = [code, identifier]
        payload.appendLE(UInt16(data.count))
        return acl(link: link, sent: sent, cid: 0x0005, payload: payload + data)
    }

    static func words(_ values: UInt16...) -> [UInt8] {
        var bytes: [UInt8] = []
        for value in values { bytes.appendLE(value) }
        return bytes
    }

    /// A link's connection handle: below 0x0E00 for a peer link (its id, modulo 0x0E00, which is
    /// also the id replay gives it back); 0x0E00–0x0EFF for a phone's GATT connection, which
    /// `CapturingGATTBackend` names `phoneLink(n)`.
    static func handle(_ link: LinkID) -> UInt16 {
        link >= phoneLinks ? phoneHandles | UInt16(link & 0xFF) : UInt16(link % LinkID(phoneHandles))
    }

    /// The first handle of phones' connections.
    package static let phoneHandles: UInt16 = 0x0E00
    /// The link ids standing for phones' connections (no peer link gets one: they count from 1).
    static let phoneLinks: LinkID = 0xFFFF_FF00

    static func phoneLink(_ n: UInt8) -> LinkID { phoneLinks | LinkID(n) }
}
