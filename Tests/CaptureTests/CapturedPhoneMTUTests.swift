import GATTServer
import Glibc
import Testing
@testable import Capture

/// The MTU exchange a capture renders for a phone (the node never sees the real one): 517 for a
/// phone whose first event is on the Android service (Android apps call `requestMtu(517)`), 185
/// for an iPhone, each answered with our servers' 517. Octets by the Core Specification: ACL
/// header (4), L2CAP header (4, CID 0x0004), Exchange MTU Request 0x02 / Response 0x03 with a
/// little-endian MTU.
@Suite struct CapturedPhoneMTUTests {
    /// A backend whose clients' events the test hands over.
    final class FedBackend: GATTBackend, @unchecked Sendable {
        var events: (@Sendable (GATTClientEvent) -> Void)?
        func start(events: @escaping @Sendable (GATTClientEvent) -> Void) { self.events = events }
        func notify(_ client: GATTClient, characteristic: GATTUUID, value: [UInt8]) {}
        func stop() {}
    }

    @Test(arguments: [
        (AndroidOOBGATTService.rigToPhone, [UInt8(0x02), 0x05, 0x02]),
        (AndroidOOBGATTService.jetpack, [0x02, 0x05, 0x02]),
        (AccessoryGATTService.qorvoTX, [0x02, 0xB9, 0x00]),
    ])
    func theRenderedMTUIsThePlatforms(_ subscribed: GATTUUID, _ request: [UInt8]) throws {
        let path = "/tmp/nb-capture-mtu-\(UInt64.random(in: 0...UInt64.max)).pcap"
        defer { unlink(path) }
        let inner = FedBackend()
        let database = PhoneTransport.database(offering: [.qorvoNearbyInteraction, .androidOOB])
        let capturing = CapturingGATTBackend(inner, database: database, pcap: try PcapWriter(path: path, linkType: 201), clock: { 0 })
        capturing.start { _ in }
        inner.events?(.client(GATTClient("phone"), .subscription(characteristic: subscribed, .notifications)))
        let att = try PcapReader.read(path).records.map { Array($0.bytes.dropFirst(4)) }
            .filter { $0.first == 0x02 }.map { Array($0.dropFirst(9)) }
        #expect(att.first == request)
        #expect(att.dropFirst().first == [0x03, 0x05, 0x02])
    }
}
