import BLE
import Glibc
import Synchronization
import Testing

@testable import Capture
@testable import Replay

/// Replay reads ble.pcap's K-frames back into whole SDUs: an SDU over one MPS is two K-frames,
/// and the signalling around it is none of the node's link data. A link's end reaches the node
/// only when the peer ended it: the node's adapter never tells it of its own `disconnect`.
@Suite struct CapturedSDUTests {
    @Test func replayJoinsTheKFramesOfEachSDUAndSkipsTheSignalling() async throws {
        let path = "/tmp/nb-sdus-\(UInt64.random(in: 0...UInt64.max)).pcap"
        defer { unlink(path) }
        let inner = FedAdapter()
        let adapter = CapturingBLEAdapter(inner, pcap: try PcapWriter(path: path, linkType: 201), psm: 0x85, clock: { 0 })
        try await adapter.start { _ in }
        let peer = BLEAddress(bytes: [1, 2, 3, 4, 5, 0xC6])
        let long = (0..<438).map { UInt8(truncatingIfNeeded: $0) }
        let link = try adapter.connect(to: peer)
        inner.emit(.linkOpened(link, peer: peer, initiatedLocally: true))
        try adapter.send(long, on: link)
        inner.emit(.linkData(link, long.reversed()))
        inner.emit(.linkData(link, [0x42]))
        adapter.disconnect(link)
        let theirs = LinkID(99)
        inner.emit(.linkOpened(theirs, peer: peer, initiatedLocally: false))
        inner.emit(.linkClosed(theirs))

        let node = CapturedNode(uci: [], ble: try PcapReader.read(path).records)
        #expect(node.localLinks == [link])
        #expect(node.firstSent[link] == long)
        let events = node.timeline.compactMap { entry -> BLEEvent? in if case .ble(let event) = entry.input { event } else { nil } }
        #expect(
            events == [
                .linkOpened(link, peer: peer, initiatedLocally: true), .linkData(link, long.reversed()), .linkData(link, [0x42]),
                .linkOpened(theirs, peer: peer, initiatedLocally: false), .linkClosed(theirs),
            ])
    }
}
