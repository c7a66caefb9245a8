import BLE
import BlueZMgmt
import CBlueZ
import Glibc
import Logging
import Synchronization
import SystemPackage
import Testing

@testable import BLEBlueZ
@testable import GATTServer

/// `ATTListener` on a real kernel: runs only in the VM rig (Tests/VMRig/att-kernel.sh sets
/// NEARBY_BRIDGE_VM_ATT), where hci0 advertises connectable and hci1 is powered, both on the
/// rig's Bumble air, with or without bluetoothd listening on CID 4 before it. The client is the kernel's own LE ATT socket on hci1 (CID 4, as BlueZ's
/// GATT client connects); PDUs and answers as in ATTChannelTests, from Vol 3 Part F.
@Suite(.enabled(if: getenv("NEARBY_BRIDGE_VM_ATT") != nil))
struct ATTListenerKernelTests {
    @Test func servesAClientOverTheAir() async throws {
        let server = try await BlueZAdapter.readInfo("hci0")
        let client = try await BlueZAdapter.readInfo("hci1")
        let links = LinkLog()
        let listener = try ATTListener.start(
            adapter: "hci0", adapterAddress: server.address, database: accessoryDatabase,
            logger: Logger(label: "att-kernel-test"), handler: links.record)
        defer { listener.stop() }

        // A fact, not a requirement: does the kernel refuse a second bind of CID 4 on hci0?
        switch Result(catching: { () throws(BlueZError) in try L2CAPSocket.makeATT(adapter: server.address) }) {
        case .success(let fd):
            print("VM-ATT second bind of CID 4 on hci0: accepted")
            close(fd)
        case .failure(let error): print("VM-ATT second bind of CID 4 on hci0: \(error)")
        }

        let peer = try SeqpacketClient.connectATT(from: client.address, to: server.address)
        defer { try? peer.fd.close() }
        #expect(try peer.ask(octets("02 00 02")) == octets("03 05 02"))
        #expect(
            try peer.ask(octets("10 01 00 FF FF 00 28"))
                == octets("11 14 01 00 08 00") + niServiceLE + octets("09 00 0E 00") + uartServiceLE + octets("0F 00 11 00") + tokenServiceLE)
        #expect(try peer.ask(octets("0A 03 00")) == octets("01 0A 03 00 0F"), "an unencrypted link")
        #expect(try peer.ask(octets("12 08 00 01 00")) == octets("13"))
        let channel = try #require(links.waitForChannel())
        #expect(links.peer == BLEAddress(bytes: client.address))
        try channel.notify(AccessoryGATTService.qorvoTX, value: octets("01 02 03"))
        #expect(peer.receive() == octets("1B 07 00 01 02 03"))
        #expect(links.waitForClient(count: 1) == [.subscription(characteristic: AccessoryGATTService.qorvoTX, .notifications)])

        try peer.fd.close()
        #expect(links.waitUntilClosed(), "the server side saw the link end")
    }
}

/// What the listener reported, for the test to wait on.
private final class LinkLog: Sendable {
    private struct State {
        var channel: ATTChannel?
        var peer: BLEAddress?
        var client: [ATTServerAction] = []
        var closed = false
    }
    private let state = Mutex(State())

    var peer: BLEAddress? { state.withLock { $0.peer } }

    @Sendable func record(_ event: ATTLinkEvent) {
        state.withLock { s in
            switch event {
            case .opened(let channel, let peer): (s.channel, s.peer) = (channel, peer)
            case .client(_, let action): s.client.append(action)
            case .closed: s.closed = true
            }
        }
    }

    func waitForChannel() -> ATTChannel? { wait { $0.channel } }
    func waitForClient(count: Int) -> [ATTServerAction]? { wait { $0.client.count >= count ? $0.client : nil } }
    func waitUntilClosed() -> Bool { wait { $0.closed ? true : nil } ?? false }

    private func wait<T>(_ ready: (State) -> T?) -> T? {
        polled(1000, every: 10_000) { state.withLock { ready($0) } }
    }
}
