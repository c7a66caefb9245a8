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
        let packets = HCIRendering.received(.advertisement(address, rssi: -60, data: advert + name))
        #expect(packets.count == 2)
        #expect(packets[0].prefix(4) == [0, 0, 0, 1])  // received
        #expect(packets[0][4...14] == [0x04, 0x3E, 43, 0x02, 0x01, 0x00, 0x01, 1, 2, 3, 4])
        #expect(packets[0].last == UInt8(bitPattern: -60))
        #expect(Array(packets[1].dropFirst(4)) == [0x04, 0x3E, 17, 0x02, 0x01, 0x04, 0x01, 1, 2, 3, 4, 5, 0xC6, 5] + name + [0xC4])
        #expect(
            HCIRendering.acl(link: 3, sdu: [0xAA, 0xBB]) == [0x02, 0x03, 0x20, 0x08, 0x00, 0x04, 0x00, 0x40, 0x00, 0x02, 0x00, 0xAA, 0xBB])
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

/// DIR/events.jsonl is a sink of its own: it keeps every event, the ranges a slow stdout sheds too.
@Suite struct CaptureEventsTests {
    final class StalledOutput: EventOutput {
        private let gate = Mutex(false)
        func open() { gate.withLock { $0 = true } }
        func write(line: String) throws {
            while !gate.withLock({ $0 }) { usleep(1000) }
        }
    }

    @Test func eventsFileIsTheCompleteRecordWhateverStdoutSheds() throws {
        var template = Array("/tmp/capture-events-XXXXXX".utf8CString)
        let path = String(cString: mkdtemp(&template)!)
        let capture = try CaptureDirectory(path: path)
        let stdout = StalledOutput()
        let stream = EventStream(sinks: [
            JSONLinesSink(output: stdout, includesRanges: true, bufferedLines: 4),
            try capture.eventSink(includesRanges: true),
        ])
        let range = Event(node: "a", body: .range(.init(peer: "b", status: "OK", distance: 1, filtered: 1, rate: 0, nlos: nil, azimuth: nil, elevation: nil)))
        for _ in 0..<12 { stream.emit(range, timestampMilliseconds: 0) }
        stdout.open()
        stream.drain()
        #expect(stream.takeShedRanges(node: "a") > 0)
        let text = String(decoding: RawFile.read("\(path)/events.jsonl"), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 12)
        #expect(lines.enumerated().allSatisfy { $0.element.hasPrefix(#"{"v":1,"seq":\#($0.offset + 1),"ts":"1970-01-01T00:00:00.000Z","type":"range""#) })
    }
}

enum RawFile {
    static func read(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n <= 0 { return bytes }
            bytes += chunk.prefix(n)
        }
    }
}

/// Issue 34, item 6: a handle's story in ble.pcap ends with one Disconnection Complete, as on a
/// real HCI: never two (our disconnect, then the adapter's close), never ACL data after it.
@Suite struct CapturedLinkEndTests {
    /// An adapter that reports the close of a link we disconnected, and an SDU read after it.
    final class ClosingAdapter: BLEAdapter {
        let handler = Mutex<(@Sendable (BLEEvent) -> Void)?>(nil)
        var backendName: String { "test" }
        func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws { handler.withLock { $0 = events } }
        func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {}
        func startScanning() async throws {}
        func connect(to peer: BLEAddress) throws -> LinkID { 7 }
        func send(_ sdu: [UInt8], on link: LinkID) throws {}
        func disconnect(_ link: LinkID) {
            let events = handler.withLock { $0 }
            events?(.linkData(link, [0xEE]))
            events?(.linkClosed(link))
        }
        func stop() async {}
        func emit(_ event: BLEEvent) { handler.withLock { $0 }?(event) }
    }

    @Test func oneDisconnectionCompletePerHandleAndNothingAfterIt() async throws {
        let path = "/tmp/nb-capture-\(UInt64.random(in: 0...UInt64.max)).pcap"
        defer { unlink(path) }
        let inner = ClosingAdapter()
        let pcap = try PcapWriter(path: path, linkType: 201)
        let adapter = CapturingBLEAdapter(inner, pcap: pcap, clock: { 0 })
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
            case (0x04, 0x3E): "open"
            case (0x02, _): "acl \(h4.last!)"
            case (0x04, 0x05): "closed \(h4[4]) reason \(String(h4[6], radix: 16))"
            default: "other"
            }
        }
        #expect(kinds == ["open", "acl 1", "acl 2", "closed 3 reason 16", "closed 7 reason 13"])
    }
}
