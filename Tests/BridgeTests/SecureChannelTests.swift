import BLE
import Bridge
import Events
import Foundation
import Logging
import PeerProtocol
import PeerSecurity
import Synchronization
import Testing
import UCI

@testable import Simulation

/// Peer protocol v2 in a whole world: the rigs of one event range and bump over the encrypted
/// channel; a rig without the key, or with another event's, never gets in; nothing secret is on the air.
@Suite(.serialized) struct SecureChannelTests {
    /// Everything a node's adapter put on the air: adverts, scan responses, SDUs.
    final class AirLog: BLEAdapter {
        private let inner: any BLEAdapter
        private let sent = Mutex<[[UInt8]]>([])
        var bytes: [[UInt8]] { sent.withLock { $0 } }
        var backendName: String { inner.backendName }
        var boundAddresses: Bool { inner.boundAddresses }

        init(_ inner: any BLEAdapter) { self.inner = inner }

        func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws { try await inner.start(events: events) }
        func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {
            sent.withLock { $0 += [data, scanResponse] }
            try await inner.advertise(data, scanResponse: scanResponse)
        }
        func startScanning() async throws { try await inner.startScanning() }
        func connect(to peer: BLEAddress) throws -> LinkID { try inner.connect(to: peer) }
        func send(_ sdu: [UInt8], on link: LinkID) throws {
            sent.withLock { $0.append(sdu) }
            try inner.send(sdu, on: link)
        }
        func disconnect(_ link: LinkID) { inner.disconnect(link) }
        func stop() async { await inner.stop() }
    }

    static let eventKey = String(repeating: "5a", count: 32)
    static let otherEventKey = String(repeating: "a5", count: 32)

    @Test func onlyTheEventsRigsGetInAndNothingSecretIsOnTheAir() async throws {
        var scenario = try Scenario.builtIn()
        scenario.groupKey = Self.eventKey
        scenario.nodes[scenario.nodes.firstIndex { $0.name == "bob" }!].groupKey = "none"  // a v1 rig
        scenario.nodes[scenario.nodes.firstIndex { $0.name == "dave" }!].groupKey = Self.otherEventKey
        let airs = Mutex<[String: AirLog]>([:])
        let boards = Mutex<[String: OneToManyTests.CommandLog]>([:])
        var options = SimulationDriver.Options()
        options.speed = nil
        options.epochMilliseconds = fixedEpoch
        options.instrument = { name, uwb, ble, _ in
            let (air, board) = (AirLog(ble), OneToManyTests.CommandLog(uwb))
            airs.withLock { $0[name] = air }
            boards.withLock { $0[name] = board }
            return (board, air)
        }
        let output = CollectedEvents()
        let driver = SimulationDriver(
            scenario: scenario, options: options, events: EventStream(output: output, includesRanges: false), logger: quietLogger)
        try await driver.run()
        let events = try parse(output.lines)
        let ids = driver.identities.mapValues(\.peerID.description)

        func found(by node: String) -> Set<String> {
            Set(events.filter { $0["node"] as? String == ids[node] && $0["type"] as? String == "peer.found" }.compactMap { $0["peer"] as? String })
        }
        #expect(found(by: "rig") == [ids["alice"]!, ids["carol"]!])
        #expect(found(by: "bob").isDisjoint(with: [ids["rig"]!, ids["alice"]!, ids["carol"]!, ids["dave"]!]))
        #expect(found(by: "dave").isEmpty)
        let bumps = events.filter { $0["type"] as? String == "bump" }
        let rigBumps = bumps.filter { $0["node"] as? String == ids["rig"] && $0["peer"] as? String == ids["alice"] }
        let aliceBumps = bumps.filter { $0["node"] as? String == ids["alice"] && $0["peer"] as? String == ids["rig"] }
        #expect(rigBumps.count == 1 && aliceBumps.count == 1)
        #expect(rigBumps.first?["bump_id"] as? Int == aliceBumps.first?["bump_id"] as? Int)
        #expect(((aliceBumps.first?["card"] as? [String: Any])?["name"] as? String) == "Booth rig")
        #expect(!bumps.contains { [ids["bob"], ids["dave"]].contains($0["peer"] as? String) }, "bob and dave bump no keyed rig")
        let devices = events.filter { $0["type"] as? String == "device" && $0["radio"] as? String == "ble" }
        let security = Dictionary(
            uniqueKeysWithValues: devices.compactMap { e in (e["node"] as? String).map { ($0, (e["detail"] as? [String: String])?["security"]) } })
        #expect(security[ids["rig"]!] == "event-key" && security[ids["bob"]!] == "none")

        // What the keyed rigs sent: no card, no name, no STS value their boards were given. The
        // virtual boards run provisioned STS, so keyed pairs use it: session keys, not IVs.
        let secrets: [(String, [UInt8])] =
            ["rig", "alice", "carol"].flatMap { node -> [(String, [UInt8])] in
                let card = driver.identities[node]!.card.json
                let configs = (boards.withLock { $0[node] }?.commands ?? []).compactMap { command -> [AppConfigTLV]? in
                    guard case .setAppConfig(_, let tlvs) = command else { return nil }
                    return tlvs
                }
                let keys = configs.flatMap { $0.filter { $0.id == .sessionKey }.map(\.value) }
                #expect(!keys.isEmpty, "\(node)'s board was given session keys")
                #expect(configs.allSatisfy { $0.contains(.stsConfig(.provisioned)) == $0.contains { $0.id == .sessionKey } })
                let ivs = configs.flatMap { $0.filter { $0.id == .staticSTSIV }.map(\.value) }
                return [("card of \(node)", Array(card.utf8)), ("name of \(node)", Array(node.utf8))]
                    + (keys + ivs).map { ("STS value of \(node)", $0) }
            }
        for node in ["rig", "alice", "carol"] {
            let air = try #require(airs.withLock { $0[node] }).bytes
            #expect(air.count > 5, "adverts, handshake and sealed frames")
            for (what, secret) in secrets {
                #expect(!air.contains { Self.contains($0, secret) }, "\(what) is on the air in \(node)'s traffic")
            }
        }
    }

    /// An attacker on the air alters, cuts short and replays peer-channel frames (10 % each, and
    /// 10 % are lost besides): every such frame is discarded, the links stay, and the meetup's
    /// rigs bump exactly as on a quiet air: the same pairs, once on each side, with each other's
    /// cards.
    @Test func alteredCutAndReplayedFramesAreDiscardedAndThePeersStillBump() async throws {
        func bumps(attacked: Bool) async throws -> (bumps: [String], log: [String]) {
            var scenario = try Scenario.builtIn()
            if attacked {
                var radio = scenario.radio ?? RadioModel()
                radio.linkLossProbability = 0.1
                radio.linkTamperProbability = 0.1
                radio.linkTruncateProbability = 0.1
                radio.linkReplayProbability = 0.1
                scenario.radio = radio
            }
            // With each line's `reason`, to tell a link closed by a failed handshake from one
            // closed for a frame on an established link.
            let log = CollectedLog()
            var logger = Logger(label: "attacked") { _ in
                CollectedLog.Handler(sink: log) { "\($0.message) \($0.metadata?["reason"].map { "\($0)" } ?? "")" }
            }
            logger.logLevel = .notice
            let output = CollectedEvents()
            var options = SimulationDriver.Options()
            options.speed = nil
            options.epochMilliseconds = fixedEpoch
            let driver = SimulationDriver(
                scenario: scenario, options: options, events: EventStream(output: output, includesRanges: false), logger: logger)
            try await driver.run()
            let names = Dictionary(uniqueKeysWithValues: driver.identities.map { ($0.value.peerID.description, $0.key) })
            let bumps = try parse(output.lines).filter { $0["type"] as? String == "bump" }.map { bump in
                let card = (bump["card"] as? [String: Any])?["name"] as? String ?? "?"
                return "\(names[bump["node"] as! String]!) bumped \(names[bump["peer"] as! String]!) (card \(card))"
            }
            return (bumps.sorted(), log.lines.withLock { $0 })
        }
        let quiet = try await bumps(attacked: false)
        let attacked = try await bumps(attacked: true)
        #expect(quiet.bumps.count == 4, "two bumps, each reported by both sides: \(quiet.bumps)")
        #expect(attacked.bumps == quiet.bumps)
        #expect(attacked.log.contains { $0.contains("discarding peer-channel frames that do not authenticate") })
        #expect(!quiet.log.contains { $0.contains("discarding") })
        // No link closes for a sealed frame: only an attacked handshake, or a lost hello (the
        // responder's first message must be hello), closes one, and the initiator comes back.
        let closed = attacked.log.filter { $0.hasPrefix("closing link") }
        #expect(!closed.contains { $0.contains("sealed frame") || $0.contains("after the handshake") }, "\(closed)")
    }

    /// The private advert changes every rotation period, and every version of it resolves, with
    /// the key, to the same rig.
    @Test func theAdvertRotatesOnSchedule() async throws {
        var scenario = try Scenario.builtIn()
        scenario.groupKey = Self.eventKey
        let air = Mutex<AirLog?>(nil)
        var options = SimulationDriver.Options()
        options.speed = nil
        options.epochMilliseconds = fixedEpoch
        options.bridge.security.advertRotationMilliseconds = 10_000
        let aliceAir = Mutex<AirLog?>(nil)
        options.instrument = { name, uwb, ble, _ in
            guard name == "rig" || name == "alice" else { return (uwb, ble) }
            let logged = AirLog(ble)
            if name == "rig" { air.withLock { $0 = logged } } else { aliceAir.withLock { $0 = logged } }
            return (uwb, logged)
        }
        let driver = SimulationDriver(
            scenario: scenario, options: options, events: EventStream(output: CollectedEvents(), includesRanges: false), logger: quietLogger)
        try await driver.run()
        let adverts = try #require(air.withLock { $0 }).bytes.filter { PrivateAdvert.isPresent(in: $0) }
        // 60 s: the one at start and one per 10 s period after it.
        #expect(adverts.count == 6 || adverts.count == 7, "\(adverts.count) adverts")
        #expect(Set(adverts).count == adverts.count, "every period's advert is new")
        let resolver = PrivateAdvert(key: try GroupKey(text: Self.eventKey))
        #expect(adverts.allSatisfy { resolver.open($0)?.peerID == driver.identities["rig"]!.peerID })
        // Without the key nothing links two periods: what the rig's adverts have in common is a
        // prefix every keyed rig sends (alice's too), and neither its peer id nor its UWB address
        // is in any of them.
        let alice = try #require(aliceAir.withLock { $0 }).bytes.filter { PrivateAdvert.isPresent(in: $0) }
        let all = adverts + alice
        let common = (0..<all[0].count).prefix { offset in all.allSatisfy { $0.count == all[0].count && $0[offset] == all[0][offset] } }.count
        let ownCommon = (0..<adverts[0].count).prefix { offset in adverts.allSatisfy { $0[offset] == adverts[0][offset] } }.count
        #expect(ownCommon == common, "the rig's adverts share \(ownCommon) leading bytes, every keyed rig's \(common)")
        let identity = driver.identities["rig"]!
        let id = withUnsafeBytes(of: identity.peerID.rawValue.littleEndian, Array.init)
        let address = withUnsafeBytes(of: identity.uwbShortAddress.littleEndian, Array.init)
        #expect(!adverts.contains { Self.contains($0, id) || Self.contains(Array($0[common...]), address) })
    }

    /// The handshake costs one round trip before `hello`: ranging starts at most 100 ms later
    /// than over the v1 channel (virtual time: the same every run).
    @Test func theHandshakeDelaysTheFirstRangeByAtMostATenthOfASecond() async throws {
        func delay(groupKey: String?) async throws -> Int64 {
            var scenario = try Scenario.builtIn()
            scenario.groupKey = groupKey
            let (driver, output) = fastDriver(scenario, ranges: true)
            try await driver.run()
            let events = try parse(output.lines)
            let (rig, alice) = (driver.identities["rig"]!.peerID.description, driver.identities["alice"]!.peerID.description)
            func time(_ type: String) throws -> Int64 {
                let event = try #require(events.first { $0["node"] as? String == rig && $0["peer"] as? String == alice && $0["type"] as? String == type })
                let stamp = try #require(event["ts"] as? String)
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                return Int64((try #require(formatter.date(from: stamp)).timeIntervalSince1970 * 1000).rounded())
            }
            return try time("range") - time("peer.found")
        }
        let (clear, encrypted) = (try await delay(groupKey: nil), try await delay(groupKey: Self.eventKey))
        #expect(encrypted - clear <= 100, "peer.found to first range: \(clear) ms in the clear, \(encrypted) ms encrypted")
        #expect(encrypted >= clear, "the handshake cannot make ranging start sooner")
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
