import BLE
import Synchronization

/// Passes everything through and records it as pcap link type 201 (H4 with a direction word),
/// so Wireshark shows adverts, links and the peer protocol's SDUs.
///
/// With the kernel's mgmt channel, or the virtual air, no HCI crosses this seam; the records
/// are the HCI an H4 controller would have carried for the same traffic: LE Advertising Reports
/// (advertising data and scan response split at an AD boundary), LE Connection Complete and
/// Disconnection Complete events, and one ACL/L2CAP LE K-frame per SDU (CID 0x0040; a real
/// channel may segment an SDU into several PDUs). Handles are our link ids. As on a real HCI,
/// a handle's story ends with one Disconnection Complete: the first of our `disconnect` (reason
/// 0x16, local host) and the adapter's `linkClosed` (0x13, remote user); nothing of that link
/// is recorded after it (an SDU still read or sent while the channel closes).
package final class CapturingBLEAdapter: BLEAdapter {
    private let inner: any BLEAdapter
    private let pcap: PcapWriter
    private let clock: @Sendable () -> Int64
    /// Links being connected or open: those whose Disconnection Complete is still to come.
    private let live = Mutex<Set<LinkID>>([])
    package var backendName: String { inner.backendName }

    package init(_ inner: any BLEAdapter, pcap: PcapWriter, clock: @escaping @Sendable () -> Int64) {
        self.inner = inner
        self.pcap = pcap
        self.clock = clock
    }

    package func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws {
        try await inner.start { [self] event in
            let recorded = live.withLock { live in
                switch event {
                case .linkOpened(let link, _, _):
                    live.insert(link)
                    return true
                case .linkData(let link, _): return live.contains(link)
                case .linkClosed(let link): return live.remove(link) != nil
                case .advertisement, .adapterPowered: return true
                }
            }
            if recorded {
                let now = clock()
                for packet in HCIRendering.received(event) { pcap.write(packet, microseconds: now) }
            }
            events(event)
        }
    }

    package func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {
        try await inner.advertise(data, scanResponse: scanResponse)
    }

    package func startScanning() async throws {
        try await inner.startScanning()
    }

    package func connect(to peer: BLEAddress) throws -> LinkID {
        let link = try inner.connect(to: peer)
        live.withLock { _ = $0.insert(link) }
        return link
    }

    package func send(_ sdu: [UInt8], on link: LinkID) throws {
        if live.withLock({ $0.contains(link) }) {
            pcap.write(HCIRendering.direction(sent: true) + HCIRendering.acl(link: link, sdu: sdu), microseconds: clock())
        }
        try inner.send(sdu, on: link)
    }

    package func disconnect(_ link: LinkID) {
        if live.withLock({ $0.remove(link) != nil }) {
            pcap.write(
                HCIRendering.direction(sent: false) + HCIRendering.disconnectionComplete(link: link, reason: 0x16), microseconds: clock())
        }
        inner.disconnect(link)
    }

    package func stop() async {
        await inner.stop()
    }
}

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
