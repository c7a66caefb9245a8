import Glibc
import StreamIO
import Synchronization
import SystemPackage
import Testing

@testable import BLEBlueZ
@testable import GATTServer

/// The kernel-socket backend's link over socketpair(AF_UNIX, SOCK_SEQPACKET), which keeps PDU
/// boundaries as the LE ATT channel's socket does. The client's PDUs and the expected answers
/// are written by hand from the Core Specification (Vol 3 Part F §3.4; handles as in
/// GATTDatabaseTests); ATT_MTU is 23 unless a test exchanges it.
@Suite struct ATTChannelTests {
    /// §3.4.2.1-2 then §3.4.4.9-10 (Part G §4.4.1): after the exchange ATT_MTU is the client's
    /// 512, and one Read By Group Type response carries all three services.
    @Test func exchangeMTUThenDiscoverPrimaryServices() throws {
        let link = try ChannelLink()
        #expect(try link.client.ask(octets("02 00 02")) == octets("03 05 02"))
        #expect(link.channel.mtu == 512)
        #expect(
            try link.client.ask(octets("10 01 00 FF FF 00 28"))
                == octets("11 14 01 00 08 00") + niServiceLE + octets("09 00 0E 00") + uartServiceLE + octets("0F 00 11 00") + tokenServiceLE)
        #expect(try link.client.ask(octets("10 12 00 FF FF 00 28")) == octets("01 10 12 00 0A"))
    }

    /// §3.4.3.1-2: Find Information, format 0x01 (16-bit types) up to the first 128-bit type,
    /// format 0x02 for that one; a 0x2902 descriptor alone.
    @Test func findInformation() throws {
        let link = try ChannelLink()
        #expect(try link.client.ask(octets("04 01 00 FF FF")) == octets("05 01 01 00 00 28 02 00 03 28"))
        #expect(try link.client.ask(octets("04 03 00 03 00")) == octets("05 02 03 00") + niSecureLE)
        #expect(try link.client.ask(octets("04 08 00 08 00")) == octets("05 01 08 00 02 29"))
        #expect(try link.client.ask(octets("04 12 00 FF FF")) == octets("01 04 12 00 0A"))
    }

    /// §3.4.5.1-2: a Write Request to TX's 0x2902 (0x0008) is answered 0x13 and subscribes the
    /// client; a notification then arrives as one PDU of its own (§3.4.7.1: 0x1B, the value's
    /// handle 0x0007, the value), and two as two.
    @Test func subscribeThenNotify() throws {
        let link = try ChannelLink()
        #expect(throws: ATTNotificationError.notSubscribed(AccessoryGATTService.qorvoTX)) {
            try link.channel.notify(AccessoryGATTService.qorvoTX, value: [0x01])
        }
        #expect(try link.client.ask(octets("12 08 00 01 00")) == octets("13"))
        #expect(link.waitForActions(1) == [.subscription(characteristic: AccessoryGATTService.qorvoTX, .notifications)])
        // What the node gets: the action under the channel's client name.
        #expect(
            ATTLinkEvent.client(link.channel, .subscription(characteristic: AccessoryGATTService.qorvoTX, .notifications)).clientEvent
                == .client(GATTClient("att:7"), .subscription(characteristic: AccessoryGATTService.qorvoTX, .notifications)))
        #expect(ATTLinkEvent.closed(link.channel).clientEvent == .closed(GATTClient("att:7")))
        try link.channel.notify(AccessoryGATTService.qorvoTX, value: octets("01 02 03"))
        try link.channel.notify(AccessoryGATTService.qorvoTX, value: octets("02"))
        #expect(link.client.receive() == octets("1B 07 00 01 02 03"))
        #expect(link.client.receive() == octets("1B 07 00 02"))
        #expect(link.client.receive(timeoutMilliseconds: 100) == nil)
    }

    /// §3.4.5.1: a value written to RX (0x0005) is answered and handed up; a 0x2902 value with a
    /// bit the characteristic does not allow (indications on a notify-only TX) is refused.
    @Test func writeRequests() throws {
        let link = try ChannelLink()
        #expect(try link.client.ask(octets("12 05 00 0A")) == octets("13"))
        #expect(link.waitForActions(1) == [.write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: 0x0005, value: [0x0A], withResponse: true)])
        #expect(try link.client.ask(octets("12 08 00 02 00")) == octets("01 12 08 00 13"))
    }

    /// §3.2.8: a client may send at most ATT_MTU octets. A 600-octet Read Request at ATT_MTU 23
    /// is an Invalid PDU with handle 0; the socket drops the rest of it, so the next request is
    /// read whole. After an exchange the limit is the new ATT_MTU: a 100-octet Write Request
    /// at ATT_MTU 100 is served, a 101-octet one refused.
    @Test func pduLongerThanMTU() throws {
        let link = try ChannelLink()
        #expect(try link.client.ask(octets("0A 0F 00") + [UInt8](repeating: 0xEE, count: 597)) == octets("01 0A 00 00 04"))
        #expect(try link.client.ask(octets("0A 0F 00")) == octets("0B") + tokenServiceLE)
        #expect(try link.client.ask(octets("02 64 00")) == octets("03 05 02"))
        #expect(try link.client.ask(octets("12 05 00") + [UInt8](repeating: 0x11, count: 97)) == octets("13"))
        #expect(try link.client.ask(octets("12 05 00") + [UInt8](repeating: 0x22, count: 98)) == octets("01 12 00 00 04"))
        #expect(link.waitForActions(1) == [.write(characteristic: AccessoryGATTService.qorvoRX, valueHandle: 0x0005, value: [UInt8](repeating: 0x11, count: 97), withResponse: true)])
    }

    /// The receive buffer stays the size it was made; a longer PDU is cut to the limit and its
    /// rest dropped, not read by the next call.
    @Test func receiveIsBoundedByTheLimit() throws {
        let (reader, writer) = try seqpacketPair()
        defer {
            try? reader.close()
            try? writer.close()
        }
        _ = try writer.writeAll([UInt8](repeating: 0x5A, count: 600))
        _ = try writer.writeAll(octets("0A 01 00"))
        var buffer = [UInt8](repeating: 0, count: ATTServer.maximumMTU + 1)
        #expect(ATTChannel.receive(reader, into: &buffer, limit: 24) == 24)
        #expect(buffer.count == ATTServer.maximumMTU + 1)
        #expect(buffer[0..<24].allSatisfy { $0 == 0x5A } && buffer[24] == 0)
        #expect(ATTChannel.receive(reader, into: &buffer, limit: 24) == 3)
        #expect(Array(buffer[0..<3]) == octets("0A 01 00"))
    }

    /// Garbage gets what the server decides: Request Not Supported for an unknown request
    /// (§3.4.1.1), nothing for an unknown command (bit 6 set, §3.3) or for a response a client
    /// has no business sending; the link goes on.
    @Test func garbageIsAnsweredAndTheLinkGoesOn() throws {
        let link = try ChannelLink()
        #expect(try link.client.ask(octets("20 FF")) == octets("01 20 00 00 06"))
        try link.client.send(octets("FF 00 01"))
        try link.client.send(octets("01 02 03 04 05"))
        #expect(try link.client.ask(octets("0A 01 00")) == octets("0B") + niServiceLE, "the ignored PDUs got no answer")
    }

    /// A socketpair is no Bluetooth socket, so the link counts as unencrypted: SEC (0x0003, read
    /// only when encrypted) answers Insufficient Encryption (0x0F).
    @Test func unencryptedLinkRefusesTheSecureCharacteristic() throws {
        let link = try ChannelLink()
        #expect(try link.client.ask(octets("0A 03 00")) == octets("01 0A 03 00 0F"))
    }

    /// End of file from the client ends the session and closes the server's descriptor: the
    /// client then reads end of file too, and a notification has nowhere to go.
    @Test func endOfFileEndsTheSession() throws {
        let link = try ChannelLink()
        #expect(try link.client.ask(octets("12 08 00 01 00")) == octets("13"))
        #expect(Glibc.shutdown(link.client.fd.rawValue, Int32(SHUT_WR)) == 0)
        #expect(link.waitUntilEnded())
        #expect(link.client.seesEndOfFile())
        #expect(throws: BlueZError.socket(call: "send(ATT)", errno: ENOTCONN)) {
            try link.channel.notify(AccessoryGATTService.qorvoTX, value: [0x01])
        }
    }

    /// `shutdown` from another thread ends the owner's blocking read.
    @Test func shutdownEndsTheSession() throws {
        let link = try ChannelLink()
        link.channel.shutdown()
        #expect(link.waitUntilEnded())
        #expect(link.client.seesEndOfFile())
    }

    /// EADDRINUSE from bind names bluetoothd and the D-Bus backend; other failures stay as they
    /// were.
    @Test func bindFailureNamesTheOtherGATTServer() {
        let taken = ATTListener.bindFailure(.socket(call: "bind(L2CAP cid 4)", errno: EADDRINUSE), adapter: "hci1")
        #expect(taken == .attChannelInUse(adapter: "hci1"))
        #expect(taken.description.contains("bluetoothd") && taken.description.contains("hci1") && taken.description.contains("D-Bus"))
        let other = BlueZError.socket(call: "bind(L2CAP cid 4)", errno: EADDRNOTAVAIL)
        #expect(ATTListener.bindFailure(other, adapter: "hci1") == other)
    }
}

/// socketpair(AF_UNIX, SOCK_SEQPACKET): one descriptor for the channel, one for the client.
private func seqpacketPair() throws -> (FileDescriptor, FileDescriptor) {
    var fds: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
        throw Errno(rawValue: errno)
    }
    return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
}

/// An `ATTChannel` serving the accessory database on its own thread, and the client's end.
private final class ChannelLink: Sendable {
    let channel: ATTChannel
    let client: SeqpacketClient
    private let actions = Mutex<[ATTServerAction]>([])
    private let ended = Mutex(false)

    init() throws {
        let (server, client) = try seqpacketPair()
        self.client = SeqpacketClient(fd: client)
        channel = ATTChannel(server, database: accessoryDatabase, client: GATTClient("att:7"))
        // Weakly: the link's deinit shuts the channel down, which ends this thread.
        IOThread.detach(name: "att-test") { [channel, weak self] in
            channel.serve { action in self?.actions.withLock { $0.append(action) } }
            self?.ended.withLock { $0 = true }
        }
    }

    deinit {
        channel.shutdown()
        try? client.fd.close()
    }

    /// What the server handed up once there are `count` of them (the answer goes out first).
    func waitForActions(_ count: Int) -> [ATTServerAction] {
        polled(10_000, every: 1_000) { actions.withLock { $0.count >= count ? $0 : nil } } ?? actions.withLock { $0 }
    }

    func waitUntilEnded() -> Bool {
        polled(10_000, every: 1_000) { ended.withLock { $0 } ? true : nil } ?? false
    }
}
