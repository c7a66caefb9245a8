import BLE
import Events
import Glibc
import Synchronization
import Testing
import UCI
import UCIHost

@testable import Capture

@Suite struct CaptureTests {
    /// The classic pcap layout (tcpdump's pcap-savefile(5)): magic, version 2.4, zone, sigfigs,
    /// snaplen, link type; records: seconds, microseconds, included and original length.
    @Test func pcapHeadersFollowTheSavefileFormat() {
        #expect(
            PcapWriter.globalHeader(linkType: 299) == [
                0xD4, 0xC3, 0xB2, 0xA1, 0x02, 0x00, 0x04, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0x2B, 0x01, 0, 0,
            ])
        #expect(
            PcapWriter.record([0x20, 0x02, 0x00, 0x00], microseconds: 1_700_000_000_123_456) == [
                0x00, 0xF1, 0x53, 0x65, 0x40, 0xE2, 0x01, 0x00, 4, 0, 0, 0, 4, 0, 0, 0, 0x20, 0x02, 0x00, 0x00,
            ])
    }

    @Test func uciStreamIsSplitIntoOnePacketPerRecordAcrossChunks() {
        var framer = CapturingUCITransport.Framer()
        let reset: [UInt8] = [0x20, 0x00, 0x00, 0x01, 0x00]
        let info: [UInt8] = [0x20, 0x02, 0x00, 0x00]
        #expect(framer.push(Array(reset.prefix(3))).isEmpty)
        #expect(framer.push(Array(reset.dropFirst(3)) + info + [0x62]) == [reset, info])
        #expect(framer.push([0x00, 0x00, 0x00]) == [[0x62, 0x00, 0x00, 0x00]])
        // Bytes that cannot start a packet are still recorded, never dropped.
        #expect(framer.push([0xFF, 0xEE]) == [[0xFF, 0xEE]])
    }

    /// Layouts from the Core Specification: LE Advertising Report (Vol 4 Part E §7.7.65.2),
    /// ACL data (§5.4.2) carrying an L2CAP K-frame (Vol 3 Part A §3.4.3).
    @Test func bleEventsAreRenderedAsTheHCIAControllerWouldSend() {
        let address = BLEAddress(bytes: [1, 2, 3, 4, 5, 0xC6])
        let advert: [UInt8] = [0x02, 0x01, 0x06] + [0x1B, 0xFF] + [UInt8](repeating: 0xAB, count: 26)  // 31 bytes
        let name: [UInt8] = [0x04, 0x09, 0x61, 0x62, 0x63]
        let packets = HCIRendering.advertisingReports(address: address, rssi: -60, data: advert + name)
        #expect(packets.count == 2)
        #expect(packets[0][0...10] == [0x04, 0x3E, 43, 0x02, 0x01, 0x00, 0x01, 1, 2, 3, 4])
        #expect(packets[0].last == UInt8(bitPattern: -60))
        #expect(packets[1] == [0x04, 0x3E, 17, 0x02, 0x01, 0x04, 0x01, 1, 2, 3, 4, 5, 0xC6, 5] + name + [0xC4])
        // Received: packet boundary 0b10; the K-frame's SDU length, then the SDU.
        #expect(
            HCIRendering.kFrames(link: 3, sent: false, cid: 0x0040, sdu: [0xAA, 0xBB], mps: 247)
                == [[0x02, 0x03, 0x20, 0x08, 0x00, 0x04, 0x00, 0x40, 0x00, 0x02, 0x00, 0xAA, 0xBB]])
        #expect(HCIRendering.disconnectionComplete(link: 3, reason: 0x13) == [0x04, 0x05, 0x04, 0x00, 0x03, 0x00, 0x13])
    }

    @Test func filesRotateAtTheSizeLimit() throws {
        let directory = "/tmp/nb-capture-test-\(getpid())"
        mkdir(directory, 0o755)
        defer { _ = system("rm -rf \(directory)") }
        let writer = try PcapWriter(path: "\(directory)/u.pcap", linkType: 299, maxBytes: 100)
        for _ in 0..<10 { writer.write([0x20, 0x02, 0x00, 0x00], microseconds: 0) }  // 20 bytes each
        #expect(access("\(directory)/u.pcap.1", F_OK) == 0)
        #expect(access("\(directory)/u.pcap.2", F_OK) == 0)
        var status = stat()
        stat("\(directory)/u.pcap.1", &status)
        #expect(status.st_size == 24 + 3 * 20)  // header + three records fit in 100 bytes
    }
}
