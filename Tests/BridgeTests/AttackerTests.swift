import Foundation
import Testing

@testable import Simulation

/// Issue 35 at reduced scale: a keyed rig and its peer, who walks in from out of range and touches
/// it, among 16 attacker nodes of one kind (`Attack`) standing 1, 9 and 17 m from the rig (the
/// farthest hear the rig and the peer before these hear each other: a replayed advert comes first). The peer bumps on both sides as on a
/// quiet air, no event names an attacker, and every line is JSON that the schema accepts.
@Suite(.serialized) struct AttackerTests {
    static func scenario(_ kind: Attack.Kind?, count: Int = 16, rate: Double = 4) throws -> Scenario {
        var nodes = [
            #"{ "name": "rig", "path": [[0, 0, 0]] }"#,
            #"{ "name": "peer", "path": [[0, 40, 0], [8, 1, 0], [11, 0.03, 0], [13, 0.03, 0], [14, 1, 0]] }"#,
        ]
        if let kind {
            for i in 0..<count {
                let angle = Double(i) * 2 * .pi / Double(count)
                let r = 1 + Double(i % 3) * 8
                nodes.append(
                    #"{ "name": "attacker-\#(i)", "crowd": true, "path": [[0, \#(r * cos(angle)), \#(r * sin(angle))]], "#
                        + #""attack": {"kind": "\#(kind.rawValue)", "rate": \#(rate)} }"#)
            }
        }
        let json = #"{ "name": "attacked", "duration": 20, "groupKey": "from-seed", "nodes": [\#(nodes.joined(separator: ","))] }"#
        return try Scenario.decode(Data(json.utf8))
    }

    @Test(arguments: Attack.Kind.allCases)
    func theRealPeerStillBumpsAndNoEventNamesAnAttacker(kind: Attack.Kind) async throws {
        let scenario = try Self.scenario(kind)
        let (driver, output) = fastDriver(scenario, ranges: false)
        try await driver.run()

        let events = try parse(output.lines)
        let ids = driver.identities.mapValues(\.peerID.description)
        #expect(Set(ids.keys) == ["rig", "peer"], "attackers run no bridge")
        for (node, peer) in [("rig", "peer"), ("peer", "rig")] {
            #expect(
                events.count { $0["type"] as? String == "bump" && $0["node"] as? String == ids[node] && $0["peer"] as? String == ids[peer] } == 1,
                "\(node) bumps \(peer)")
        }
        let named = Set(events.compactMap { $0["peer"] as? String })
        #expect(named.isSubset(of: Set(ids.values)), "an event names someone other than the rig and its peer: \(named)")
        #expect(driver.attackers.count == 16)
        #expect(driver.attackers.values.allSatisfy { $0.actions > 0 }, "every attacker attacked")
        if ProcessInfo.processInfo.environment["NEARBY_BRIDGE_PYTHON"] != nil || FileManager.default.fileExists(
            atPath: packageRoot.appendingPathComponent(".venv/bin/python3").path)
        {
            let (status, message) = try validateAgainstSchema(output.lines)
            #expect(status == 0, "\(message)")
        }
    }

    /// 40 replayers, 2 adverts a second each: the peer hears the rig's advert replayed before the
    /// rig's own and may connect to a replayer, which accepts the link and never answers message 1.
    /// That costs the handshake timeout (2 s), not the connect timeout (10 s), and the address
    /// heard strongest goes first, so the link is up before the touch and both sides bump. Before
    /// both, the link came after the touch and neither side bumped.
    @Test func manyAdvertReplayersDoNotDelayTheLinkPastTheTouch() async throws {
        let scenario = try Self.scenario(.advertReplay, count: 40, rate: 2)
        let (driver, output) = fastDriver(scenario, ranges: false)
        try await driver.run()
        let events = try parse(output.lines)
        let ids = driver.identities.mapValues(\.peerID.description)
        #expect(Set(events.compactMap { $0["peer"] as? String }).isSubset(of: Set(ids.values)))
        #expect(events.count { $0["type"] as? String == "bump" } == 2)
    }

    /// Issue 35, item 1: a keyed rig advertises from addresses made with the identity resolving
    /// key its peers derive, and says so in its advert, so a replay of that advert from an
    /// attacker's radio does not resolve and is dropped. No rig ever connects to a replayer.
    /// Before the binding, the peer heard the rig's advert replayed before the rig's own and
    /// connected to replayers.
    @Test func replayedAdvertsDrawNoConnection() async throws {
        let scenario = try Self.scenario(.advertReplay, count: 40, rate: 2)
        let (driver, output) = fastDriver(scenario, ranges: false)
        try await driver.run()
        let events = try parse(output.lines)
        #expect(events.count { $0["type"] as? String == "bump" } == 2)
        #expect(driver.attackers.values.allSatisfy { $0.actions > 0 }, "every attacker replayed")
        let offered = driver.attackers.values.map(\.linksOffered).reduce(0, +)
        #expect(offered == 0, "links opened to replayers: \(offered)")
    }

    /// A peer that walks out of range stays lost while replayers near the rig go on replaying
    /// its advert: their addresses do not resolve with its key, so they are not the peer.
    /// Before the binding, each replayer's address counted as hearing it.
    @Test func replaysDoNotKeepADepartedPeerListed() async throws {
        var nodes = [
            #"{ "name": "rig", "path": [[0, 0, 0]] }"#,
            #"{ "name": "peer", "path": [[0, 3, 0], [6, 3, 0], [7, 300, 0]] }"#,
        ]
        for i in 0..<8 {
            let angle = Double(i) * 2 * .pi / 8
            nodes.append(
                #"{ "name": "replayer-\#(i)", "crowd": true, "path": [[0, \#(2 * cos(angle)), \#(2 * sin(angle))]], "#
                    + #""attack": {"kind": "advertReplay", "rate": 2, "target": "peer"} }"#)
        }
        let json = #"{ "name": "departed", "duration": 30, "groupKey": "from-seed", "nodes": [\#(nodes.joined(separator: ","))] }"#
        let (driver, output) = fastDriver(try Scenario.decode(Data(json.utf8)), ranges: false)
        try await driver.run()
        let events = try parse(output.lines)
        let ids = driver.identities.mapValues(\.peerID.description)
        let about = events.filter { $0["node"] as? String == ids["rig"] && $0["peer"] as? String == ids["peer"] }
        let kinds = about.compactMap { $0["type"] as? String }.filter { $0 == "peer.found" || $0 == "peer.lost" }
        #expect(kinds == ["peer.found", "peer.lost"], "the rig's view of the departed peer: \(kinds)")
        #expect(driver.attackers.values.allSatisfy { $0.actions > 20 }, "the replayers went on after the peer left")
    }

    /// Attackers are part of the world's seeded run: the same scenario and seed give the same lines.
    @Test func aWorldWithAttackersRunsTheSameWayTwice() async throws {
        let scenario = try Self.scenario(.garbage, count: 6)
        let first = try await runScenario(scenario, ranges: true, duration: 8)
        let second = try await runScenario(scenario, ranges: true, duration: 8)
        #expect(first == second)
    }

    @Test func anAttackNeedsAPositiveRateAndARealTarget() {
        let bad = [
            #"{"name": "s", "duration": 1, "nodes": [{"name": "a", "path": [[0, 0, 0]], "attack": {"kind": "garbage", "rate": 0}}]}"#,
            #"{"name": "s", "duration": 1, "nodes": [{"name": "a", "path": [[0, 0, 0]], "attack": {"kind": "garbage", "rate": 1, "target": "a"}}]}"#,
            #"{"name": "s", "duration": 1, "nodes": [{"name": "a", "path": [[0, 0, 0]], "attack": {"kind": "shouting", "rate": 1}}]}"#,
            #"{"name": "s", "duration": 1, "nodes": [{"name": "a", "path": [[0, 0, 0]], "attack": {"kind": "garbage", "rate": 1, "rat": 2}}]}"#,
        ]
        for json in bad {
            #expect(throws: Scenario.Invalid.self, "\(json)") { _ = try Scenario.decode(Data(json.utf8)) }
        }
    }
}
