import BLE
import Events
import Foundation
import Synchronization
import PeerSecurity
import Testing

@testable import Simulation

/// Issue 34, item 6: keyed nodes on the virtual air use resolvable private addresses that rotate
/// as a kernel with LE privacy rotates them (Core Spec Vol 6 Part B §1.3.2.2).
@Suite struct PrivateAddressTests {
    static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map { UInt8(text.dropFirst($0).prefix(2), radix: 16)! }
    }

    /// Core Spec v5.4 Vol 3 Part H Appendix D.7, "ah random address hash function": IRK
    /// ec0234a357c8ad05341010a60a397d9b, prand 708194, hash 0dfbaa, all numbers most significant
    /// octet first (Linux's selftest, smp.c `test_ah`, holds the same values reversed).
    @Test func ahGivesTheSpecificationsSampleHash() {
        let irk = Self.hex("ec0234a357c8ad05341010a60a397d9b")
        #expect(ResolvablePrivateAddress.ah(irk: irk, prand: 0x70_8194) == 0x0D_FBAA)
        // On the air, least significant octet first: hash, then prand.
        let address = ResolvablePrivateAddress.address(irk: irk, prand: 0x70_8194)
        #expect(address.bytes == [0xAA, 0xFB, 0x0D, 0x94, 0x81, 0x70])
        #expect(address.description == "70:81:94:0D:FB:AA")
        #expect(ResolvablePrivateAddress.resolves(address, irk: irk))
        #expect(!ResolvablePrivateAddress.resolves(address, irk: Self.hex("ec0234a357c8ad05341010a60a397d9c")))
    }

    /// §1.3.2.2: the two most significant bits of prand are 0b01, and its random part is
    /// neither all zeros nor all ones.
    @Test func aPrivateAddressHasItsTopBitsAndARandomPart() {
        let irk = Self.hex("000102030405060708090a0b0c0d0e0f")
        for random: UInt64 in [0, 0x3F_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0x1234_5678, 1] {
            let prand = ResolvablePrivateAddress.prand(random: random)
            let bits = prand & 0x3F_FFFF
            #expect(prand >> 22 == 0b01 && bits != 0 && bits != 0x3F_FFFF, "prand \(String(prand, radix: 16))")
            let address = ResolvablePrivateAddress.address(irk: irk, prand: prand)
            #expect(address.bytes[5] >> 6 == 0b01)
            #expect(ResolvablePrivateAddress.resolves(address, irk: irk))
        }
    }

    /// Passes everything through and keeps the addresses adverts came from and links opened with.
    final class AddressLog: BLEAdapter {
        let inner: any BLEAdapter
        let heard = Mutex<[BLEAddress]>([])
        var backendName: String { inner.backendName }
        var boundAddresses: Bool { inner.boundAddresses }
        init(_ inner: any BLEAdapter) { self.inner = inner }
        func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws {
            try await inner.start { [self] event in
                switch event {
                case .advertisement(let address, _, _), .linkOpened(_, let address, _): heard.withLock { $0.append(address) }
                default: break
                }
                events(event)
            }
        }
        func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws { try await inner.advertise(data, scanResponse: scanResponse) }
        func startScanning() async throws { try await inner.startScanning() }
        func connect(to peer: BLEAddress) throws -> LinkID { try inner.connect(to: peer) }
        func send(_ sdu: [UInt8], on link: LinkID) throws { try inner.send(sdu, on: link) }
        func disconnect(_ link: LinkID) { inner.disconnect(link) }
        func stop() async { await inner.stop() }
    }

    /// Two nodes that bump twice in 60 s, the peer's address changing every `rpaTimeout` seconds;
    /// between the bumps the peer steps out of BLE range (30 m) from 19.3 s to 21 s, across the
    /// rotation at 20 s with a 10 s period.
    static func run(groupKey: String, rpaTimeout: Double) async throws -> (events: [[String: Any]], heard: [BLEAddress], world: World) {
        let json = #"""
            { "name": "rotating", "duration": 60, "groupKey": "\#(groupKey)", "rpaTimeout": \#(rpaTimeout), "nodes": [
              { "name": "rig", "path": [[0, 0, 0]] },
              { "name": "peer", "path": [[0, 3, 0], [8, 0.03, 0], [11, 0.03, 0], [13, 0.8, 0], [19, 0.8, 0], [19.3, 35, 0],
                [20.7, 35, 0], [21, 0.8, 0], [44, 0.8, 0], [46, 0.03, 0], [49, 0.03, 0], [51, 1, 0]] } ] }
            """#
        let output = CollectedEvents()
        let log = Mutex<AddressLog?>(nil)
        var options = SimulationDriver.Options()
        options.speed = nil
        options.epochMilliseconds = fixedEpoch
        options.instrument = { name, uwb, ble, _ in
            guard name == "rig" else { return (uwb, ble) }
            let wrapped = AddressLog(ble)
            log.withLock { $0 = wrapped }
            return (uwb, wrapped)
        }
        let driver = SimulationDriver(
            scenario: try Scenario.decode(Data(json.utf8)), options: options, events: EventStream(output: output, includesRanges: true),
            logger: quietLogger)
        try await driver.run()
        return (try parse(output.lines), log.withLock { $0!.heard.withLock { $0 } }, driver.world)
    }

    @Test func keyedNodesStillFindEachOtherAndBumpWhileTheirAddressesRotate() async throws {
        let (events, heard, world) = try await Self.run(groupKey: "from-seed", rpaTimeout: 10)
        let types = events.map { $0["type"] as! String }
        #expect(types.filter { $0 == "bump" }.count == 4, "two bumps, told by both")
        #expect(types.filter { $0 == "peer.found" }.count == 2)
        #expect(!types.contains("peer.lost"), "\(events.filter { $0["type"] as? String == "peer.lost" })")
        // Ranging resumes at once after the peer's return at 21 s: not after an attempt to the
        // address the rig rotated away from at 20 s, which no one answers (`PeerAddresses`: a
        // kernel would wait until we give up, 10 s later).
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let times = events.compactMap { $0["ts"] as? String }.map { Int64((iso.date(from: $0)!.timeIntervalSince1970 * 1000).rounded()) }
        let ranged = zip(events, times).filter { $0.0["type"] as? String == "range" }.map { $0.1 - times[0] }
        #expect(ranged.contains { $0 > 21_000 && $0 < 22_000 }, "ranging did not resume within 1 s of the return")
        // The rig heard the peer from one address per 10 s period, each a resolvable private
        // address of the peer's, never its static identity address.
        let distinct = Set(heard)
        #expect(distinct.count >= 6, "\(distinct.count) addresses")
        #expect(distinct.allSatisfy { $0.bytes[5] >> 6 == 0b01 && world.body(at: $0) == 1 })
        #expect(!distinct.contains(World.address(ofBody: 1)))
    }

    @Test func openNodesKeepTheirStaticAddress() async throws {
        let (events, heard, _) = try await Self.run(groupKey: "none", rpaTimeout: 10)
        #expect(events.contains { $0["type"] as? String == "bump" })
        #expect(Set(heard) == [World.address(ofBody: 1)])
    }
}
