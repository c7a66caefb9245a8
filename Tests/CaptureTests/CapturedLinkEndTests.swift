import BLE
import Events
import Glibc
import Testing
import UCI
import UCIHost
@testable import Capture

/// Issue 34, item 6: a handle's story in ble.pcap ends with one Disconnection Complete (a
/// connection never made: a failed LE Connection Complete), as on a real HCI: never two (our
/// disconnect, then the adapter's close), never ACL data after it.
@Suite struct CapturedLinkEndTests {
    @Test func oneDisconnectionCompletePerHandleAndNothingAfterIt() async throws {
        let path = "/tmp/nb-capture-\(UInt64.random(in: 0...UInt64.max)).pcap"
        defer { unlink(path) }
        // The adapter reports the close of a link we disconnected, and an SDU read after it.
        let inner = FedAdapter { link, emit in
            emit(.linkData(link, [0xEE]))
            emit(.linkClosed(link))
        }
        let pcap = try PcapWriter(path: path, linkType: 201)
        let adapter = CapturingBLEAdapter(inner, pcap: pcap, psm: 0x85, clock: { 0 })
        try await adapter.start { _ in }
        let peer = BLEAddress(bytes: [1, 2, 3, 4, 5, 6])
        inner.emit(.linkOpened(3, peer: peer, initiatedLocally: false))
        inner.emit(.linkData(3, [0x01]))
        try adapter.send([0x02], on: 3)
        adapter.disconnect(3)  // the inner adapter then reports data and the close
        try adapter.send([0x03], on: 3)
        inner.emit(.linkClosed(3))
        let local = try adapter.connect(to: peer)  // a connect that never opens
        inner.emit(.linkClosed(local))

        let records = try PcapReader.read(path).records.map { Array($0.bytes.dropFirst(4)) }
        let kinds = records.map { h4 -> String in
            switch (h4[0], h4[1]) {
            case (0x04, 0x3E): h4[4] == 0 ? "open" : "failed \(h4[5])"
            case (0x02, _) where h4[7] == 0x05: "signal \(String(h4[9], radix: 16))"
            case (0x02, _): "acl \(h4.last!)"
            case (0x04, 0x05): "closed \(h4[4]) reason \(String(h4[6], radix: 16))"
            case (0x01, _): "command \(String(UInt16(h4[1]) | UInt16(h4[2]) << 8, radix: 16))"
            case (0x04, 0x0F): "status"
            default: "other"
            }
        }
        #expect(
            kinds == [
                "open", "signal 14", "signal 15", "acl 1", "signal 16", "acl 2", "signal 16",
                "signal 6", "signal 7", "command 406", "status", "closed 3 reason 16",
                "command 200d", "status", "failed 7",
            ])
    }
}
