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
                case .connectRefused: return false  // a link that never opened: its close is not recorded either
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
