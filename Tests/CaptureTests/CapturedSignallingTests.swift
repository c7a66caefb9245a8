import BLE
import Glibc
import Testing

@testable import Capture

/// Issue 34, item 6: ble.pcap holds the HCI commands and L2CAP signalling the bridge causes.
/// Every expected octet is written here from the Bluetooth Core Specification (v5.4) and the
/// values docs/PROTOCOL.md names, not taken from the code under test.
@Suite struct CapturedSignallingTests {
    static let peer = BLEAddress(bytes: [0x11, 0x22, 0x33, 0x44, 0x55, 0xC6])
    static let sent: [UInt8] = [0, 0, 0, 0]
    static let received: [UInt8] = [0, 0, 0, 1]

    /// What our connect to `peer` records up to the channel request: the command, its status,
    /// the connection and our request, octets from the specification.
    static let weConnect: [[UInt8]] = {
        let address: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0xC6]
        return [
            // Vol 4 Part E §7.8.12 LE Create Connection: H4 command 0x01, opcode 0x200D, 25
            // octets: LE_Scan_Interval 0x0060, LE_Scan_Window 0x0060, Initiator_Filter_Policy 0,
            // Peer_Address_Type 1 (random), Peer_Address, Own_Address_Type 1,
            // Connection_Interval_Min 0x0018, _Max 0x0028, Max_Latency 0,
            // Supervision_Timeout 0x002A, Min_CE_Length 0, Max_CE_Length 0.
            Self.sent + [0x01, 0x0D, 0x20, 0x19, 0x60, 0x00, 0x60, 0x00, 0x00, 0x01] + address
                + [0x01, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x00, 0x00],
            // §7.7.15 Command Status: event 0x0F, 4 octets: Status 0, Num_HCI_Command_Packets 1,
            // Command_Opcode 0x200D.
            Self.received + [0x04, 0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20],
            // §7.7.65.1 LE Connection Complete: event 0x3E, subevent 0x01, Status 0, handle 7,
            // Role 0 (central), Peer_Address_Type 1, Peer_Address, interval 0x0018, latency 0,
            // supervision timeout 0x002A, Central_Clock_Accuracy 0.
            Self.received + [0x04, 0x3E, 0x13, 0x01, 0x00, 0x07, 0x00, 0x00, 0x01] + address
                + [0x18, 0x00, 0x00, 0x00, 0x2A, 0x00, 0x00],
            // Vol 3 Part A §4.22 L2CAP LE Credit Based Connection Request, in an ACL packet
            // (Vol 4 Part E §5.4.2: handle 7, PB 0b00 from the host, 18 octets) on the LE
            // signalling channel (B-frame length 14, CID 0x0005): code 0x14, identifier 1,
            // length 10; SPSM 0x0085, Source CID 0x0040, MTU 1024, MPS 247, Initial Credits 5.
            Self.sent + [0x02, 0x07, 0x00, 0x12, 0x00, 0x0E, 0x00, 0x05, 0x00, 0x14, 0x01, 0x0A, 0x00]
                + [0x85, 0x00, 0x40, 0x00, 0x00, 0x04, 0xF7, 0x00, 0x05, 0x00],
        ]
    }()

    /// Runs `body` on a capturing adapter and returns the records it wrote, direction first.
    func records(_ body: (CapturingBLEAdapter, FedAdapter) async throws -> Void) async throws -> [[UInt8]] {
        let path = "/tmp/nb-signalling-\(UInt64.random(in: 0...UInt64.max)).pcap"
        defer { unlink(path) }
        let inner = FedAdapter()
        let adapter = CapturingBLEAdapter(inner, pcap: try PcapWriter(path: path, linkType: 201), psm: 0x85, clock: { 0 })
        try await adapter.start { _ in }
        try await body(adapter, inner)
        return try PcapReader.read(path).records.map(\.bytes)
    }

    @Test func aLinkWeOpenIsCommandedSignalledAndClosedAsTheSpecificationLaysItOut() async throws {
        let sdu = [UInt8](repeating: 0x5A, count: 300)
        let got = try await records { adapter, inner in
            let link = try adapter.connect(to: Self.peer)
            inner.emit(.linkOpened(link, peer: Self.peer, initiatedLocally: true))
            try adapter.send(sdu, on: link)
            adapter.disconnect(link)
        }
        let expected: [[UInt8]] = Self.weConnect + [
            // §4.23 LE Credit Based Connection Response (PB 0b10 from the controller): code 0x15,
            // the request's identifier; Destination CID 0x0040, MTU 1024, MPS 247, Initial
            // Credits 5, Result 0 (connection successful).
            Self.received + [0x02, 0x07, 0x20, 0x12, 0x00, 0x0E, 0x00, 0x05, 0x00, 0x15, 0x01, 0x0A, 0x00]
                + [0x40, 0x00, 0x00, 0x04, 0xF7, 0x00, 0x05, 0x00, 0x00, 0x00],
            // Vol 3 Part A §3.4.3 K-frames to the peer's CID 0x0040, at most MPS (247) octets of
            // information payload each: the first has the SDU length (300 = 0x012C) and 245
            // octets (L2CAP length 247, ACL length 251), the second the other 55.
            Self.sent + [0x02, 0x07, 0x00, 0xFB, 0x00, 0xF7, 0x00, 0x40, 0x00, 0x2C, 0x01] + sdu.prefix(245),
            Self.sent + [0x02, 0x07, 0x00, 0x3B, 0x00, 0x37, 0x00, 0x40, 0x00] + sdu.suffix(55),
            // §4.24 LE Flow Control Credit from the peer: code 0x16, its first identifier (1),
            // length 4; CID 0x0040 (the sender's own), Credits 2 (the two K-frames).
            Self.received + [0x02, 0x07, 0x20, 0x0C, 0x00, 0x08, 0x00, 0x05, 0x00, 0x16, 0x01, 0x04, 0x00, 0x40, 0x00, 0x02, 0x00],
            // §4.6 Disconnection Request: code 0x06, our identifier 2, length 4; Destination CID
            // (the peer's) 0x0040, Source CID (ours) 0x0040. §4.7 the response echoes both.
            Self.sent + [0x02, 0x07, 0x00, 0x0C, 0x00, 0x08, 0x00, 0x05, 0x00, 0x06, 0x02, 0x04, 0x00, 0x40, 0x00, 0x40, 0x00],
            Self.received + [0x02, 0x07, 0x20, 0x0C, 0x00, 0x08, 0x00, 0x05, 0x00, 0x07, 0x02, 0x04, 0x00, 0x40, 0x00, 0x40, 0x00],
            // Vol 4 Part E §7.1.6 Disconnect: opcode 0x0406, 3 octets: handle 7, Reason 0x13
            // (remote user terminated connection, as Linux sends); §7.7.15 its Command Status.
            Self.sent + [0x01, 0x06, 0x04, 0x03, 0x07, 0x00, 0x13],
            Self.received + [0x04, 0x0F, 0x04, 0x00, 0x01, 0x06, 0x04],
            // §7.7.5 Disconnection Complete: Status 0, handle 7, Reason 0x16 (local host).
            Self.received + [0x04, 0x05, 0x04, 0x00, 0x07, 0x00, 0x16],
        ]
        #expect(got.count == expected.count)
        for (index, (record, want)) in zip(got, expected).enumerated() { #expect(record == want, "record \(index)") }
    }

    /// A peer whose bridge is gone: its kernel takes the LE connection and refuses the channel
    /// (the BlueZ adapter's `.connectRefused`); the connection ends on the kernel's idle timer.
    @Test func aRefusedChannelIsAnsweredSPSMNotSupported() async throws {
        let got = try await records { adapter, inner in
            let link = try adapter.connect(to: Self.peer)
            inner.emit(.connectRefused(link))
            inner.emit(.linkClosed(link))
        }
        // Up to our request as in the test above, then:
        let expected: [[UInt8]] = Self.weConnect + [
            // §4.23 the response: Destination CID, MTU, MPS and Initial Credits 0, Result 0x0002
            // (connection refused, SPSM not supported).
            Self.received + [0x02, 0x07, 0x20, 0x12, 0x00, 0x0E, 0x00, 0x05, 0x00, 0x15, 0x01, 0x0A, 0x00]
                + [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00],
            // Vol 4 Part E §7.7.5 Disconnection Complete: Status 0, handle 7, Reason 0x16 (local host).
            Self.received + [0x04, 0x05, 0x04, 0x00, 0x07, 0x00, 0x16],
        ]
        #expect(got.count == expected.count)
        for (index, (record, want)) in zip(got, expected).enumerated() { #expect(record == want, "record \(index)") }
    }

    @Test func aLinkThePeerOpensIsAnsweredAndEachSDUReceivedReturnsItsCredits() async throws {
        let got = try await records { _, inner in
            inner.emit(.linkOpened(4, peer: Self.peer, initiatedLocally: false))
            inner.emit(.linkData(4, [0x01, 0x02]))
            inner.emit(.linkClosed(4))
        }
        #expect(got.count == 8)
        // §7.7.65.1: Role 1, peripheral.
        #expect(Array(got[0].prefix(12)) == Self.received + [0x04, 0x3E, 0x13, 0x01, 0x00, 0x04, 0x00, 0x01])
        // §4.22 from the peer, identifier 1; §4.23 ours with the same identifier.
        #expect(got[1] == Self.received + [0x02, 0x04, 0x20, 0x12, 0x00, 0x0E, 0x00, 0x05, 0x00, 0x14, 0x01, 0x0A, 0x00]
            + [0x85, 0x00, 0x40, 0x00, 0x00, 0x04, 0xF7, 0x00, 0x05, 0x00])
        #expect(got[2] == Self.sent + [0x02, 0x04, 0x00, 0x12, 0x00, 0x0E, 0x00, 0x05, 0x00, 0x15, 0x01, 0x0A, 0x00]
            + [0x40, 0x00, 0x00, 0x04, 0xF7, 0x00, 0x05, 0x00, 0x00, 0x00])
        // §3.4.3: one K-frame to our CID: SDU length 2, the SDU.
        #expect(got[3] == Self.received + [0x02, 0x04, 0x20, 0x08, 0x00, 0x04, 0x00, 0x40, 0x00, 0x02, 0x00, 0x01, 0x02])
        // §4.24: our first identifier, our CID, one credit back.
        #expect(got[4] == Self.sent + [0x02, 0x04, 0x00, 0x0C, 0x00, 0x08, 0x00, 0x05, 0x00, 0x16, 0x01, 0x04, 0x00, 0x40, 0x00, 0x01, 0x00])
        // §4.6/§4.7 from the peer (its second identifier), then §7.7.5 reason 0x13.
        #expect(got[5] == Self.received + [0x02, 0x04, 0x20, 0x0C, 0x00, 0x08, 0x00, 0x05, 0x00, 0x06, 0x02, 0x04, 0x00, 0x40, 0x00, 0x40, 0x00])
        #expect(got[6] == Self.sent + [0x02, 0x04, 0x00, 0x0C, 0x00, 0x08, 0x00, 0x05, 0x00, 0x07, 0x02, 0x04, 0x00, 0x40, 0x00, 0x40, 0x00])
        #expect(got[7] == Self.received + [0x04, 0x05, 0x04, 0x00, 0x04, 0x00, 0x13])
    }

    @Test func advertisingAndScanningAreEnabledOnceWithTheirData() async throws {
        let got = try await records { adapter, _ in
            try await adapter.advertise([0x02, 0x01, 0x06], scanResponse: [])
            try await adapter.advertise([0x02, 0x01, 0x06], scanResponse: [])
            try await adapter.startScanning()
            try await adapter.startScanning()
        }
        let data: [UInt8] = [0x03, 0x02, 0x01, 0x06] + [UInt8](repeating: 0, count: 28)
        let empty = [UInt8](repeating: 0, count: 32)
        // §7.8.7 LE Set Advertising Data (0x2008) and §7.8.8 LE Set Scan Response Data (0x2009):
        // a length octet and a 31-octet field; §7.7.14 Command Complete: Num_HCI_Command_Packets
        // 1, opcode, Status 0. §7.8.9 LE Set Advertising Enable (0x200A) 1, only the first time;
        // §7.8.11 LE Set Scan Enable (0x200C): enable 1, Filter_Duplicates 0, once.
        let commands: [[UInt8]] = [
            [0x01, 0x08, 0x20, 0x20] + data, [0x04, 0x0E, 0x04, 0x01, 0x08, 0x20, 0x00],
            [0x01, 0x09, 0x20, 0x20] + empty, [0x04, 0x0E, 0x04, 0x01, 0x09, 0x20, 0x00],
            [0x01, 0x0A, 0x20, 0x01, 0x01], [0x04, 0x0E, 0x04, 0x01, 0x0A, 0x20, 0x00],
            [0x01, 0x08, 0x20, 0x20] + data, [0x04, 0x0E, 0x04, 0x01, 0x08, 0x20, 0x00],
            [0x01, 0x09, 0x20, 0x20] + empty, [0x04, 0x0E, 0x04, 0x01, 0x09, 0x20, 0x00],
            [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00], [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00],
        ]
        #expect(got.map { Array($0.dropFirst(4)) } == commands)
    }
}
