import BLE
import Synchronization

/// H4 renderings of adapter events (Core Spec Vol 4 Part E §5.4 and §7.7; Vol 3 Part A §3.4).
enum HCIRendering {
    static func direction(sent: Bool) -> [UInt8] { [0, 0, 0, sent ? 0 : 1] }

    static func received(_ event: BLEEvent) -> [[UInt8]] {
        let rx = direction(sent: false)
        switch event {
        case .advertisement(let address, let rssi, let data):
            let (advertising, scanResponse) = AdvertisingData(data).split()
            var reports = [rx + advertisingReport(type: 0x00, address: address, data: advertising, rssi: rssi)]
            if !scanResponse.isEmpty { reports.append(rx + advertisingReport(type: 0x04, address: address, data: scanResponse, rssi: rssi)) }
            return reports
        case .linkOpened(let link, let peer, let initiatedLocally):
            var body: [UInt8] = [0x01, 0x00]
            body.appendLE(handle(link))
            body += [initiatedLocally ? 0x00 : 0x01, 0x01] + peer.bytes
            body.appendLE(UInt16(0x0018))  // interval 30 ms
            body.appendLE(UInt16(0))
            body.appendLE(UInt16(0x0048))  // supervision timeout 720 ms
            body.append(0x00)
            return [rx + [0x04, 0x3E, UInt8(body.count)] + body]
        case .linkData(let link, let sdu):
            return [rx + acl(link: link, sdu: sdu)]
        case .linkClosed(let link):
            return [rx + disconnectionComplete(link: link, reason: 0x13)]
        case .connectRefused:
            // Never recorded: the capture holds links that opened (CapturingBLEAdapter).
            return []
        case .adapterPowered:
            // The host switches a controller off and on with commands, not events: nothing to record.
            return []
        }
    }

    static func advertisingReport(type: UInt8, address: BLEAddress, data: [UInt8], rssi: Int) -> [UInt8] {
        let body: [UInt8] = [0x02, 0x01, type, 0x01] + address.bytes + [UInt8(data.count)] + data
            + [UInt8(bitPattern: Int8(clamping: rssi))]
        return [0x04, 0x3E, UInt8(body.count)] + body
    }

    static func acl(link: LinkID, sdu: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x02]
        frame.appendLE(handle(link) | 0x2000)  // PB = first automatically flushable
        frame.appendLE(UInt16(sdu.count + 6))
        frame.appendLE(UInt16(sdu.count + 2))  // L2CAP length
        frame.appendLE(UInt16(0x0040))  // first dynamic LE CID
        frame.appendLE(UInt16(sdu.count))  // K-frame SDU length
        return frame + sdu
    }

    static func disconnectionComplete(link: LinkID, reason: UInt8) -> [UInt8] {
        var body: [UInt8] = [0x00]
        body.appendLE(handle(link))
        body.append(reason)
        return [0x04, 0x05, UInt8(body.count)] + body
    }

    static func handle(_ link: LinkID) -> UInt16 { UInt16(truncatingIfNeeded: link) & 0x0EFF }
}
