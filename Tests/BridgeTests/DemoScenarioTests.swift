import Events
import Foundation
import Testing

@testable import Simulation

/// The meetup's streams that several tests only read: each run takes half a minute under
/// ThreadSanitizer, and seven of them in a row were the longest path of CI's TSan step. The stream
/// is deterministic (`sameSeedSameStreamIncludingEveryRange` runs it again to check that).
private enum Meetup {
    static let withoutRanges = Task { try await runScenario(Scenario.builtIn(), ranges: false) }
    static let withRanges = Task { try await runScenario(Scenario.builtIn(), ranges: true) }
}

@Suite(.serialized) struct DemoScenarioTests {
    /// The built-in meetup, seed 1, must produce exactly the checked-in stream, timestamps
    /// included (virtual time on a fixed epoch). Regenerate deliberately with
    /// `UPDATE_GOLDEN=1 swift test --filter golden` and review the diff.
    @Test func goldenStream() async throws {
        let lines = try await Meetup.withoutRanges.value
        let golden = packageRoot.appendingPathComponent("Tests/BridgeTests/Golden/meetup-seed1.jsonl")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try lines.joined().write(to: golden, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(lines.joined() == expected)
    }

    /// The demo starts its clock at the wall time of the run: the stream, timestamps aside, must
    /// not depend on it (stats on the clock's 10 s grid once did: CI's web view check saw them
    /// move between runs).
    @Test func sameSeedSameStreamIncludingEveryRangeWheneverItRuns() async throws {
        let first = try await Meetup.withRanges.value
        let second = try await runScenario(Scenario.builtIn(), ranges: true, epoch: fixedEpoch + 3_217)
        func withoutTimestamps(_ lines: [String]) -> [String] {
            lines.map { $0.replacing(/"ts":"[^"]*",/, with: "") }
        }
        #expect(first.count > 5_000)
        #expect(first.contains { $0.contains(#""type":"stats""#) })
        #expect(withoutTimestamps(first) == withoutTimestamps(second))
        #expect(first != second)
        let otherSeed = try await runScenario(Scenario.builtIn(), seed: 2, ranges: true)
        #expect(otherSeed != first)
    }

    @Test func everyLineValidatesAgainstTheSchema() async throws {
        let lines = try await Meetup.withRanges.value
        let (status, message) = try validateAgainstSchema(lines)
        #expect(status == 0, "\(message)")
        // The validator must reject a line that breaks the schema, or the check above proves nothing.
        let broken = lines[0].replacingOccurrences(of: "\"v\":1", with: "\"v\":2")
        #expect(try validateAgainstSchema([broken]).status != 0)
    }

    /// The meetup's story: both sides of each bump report it once, with the same bump id and the
    /// other side's card; found comes before near; the walker who leaves is lost by timeout.
    @Test func bumpsAreReportedOnBothSidesWithEachOthersCards() async throws {
        let scenario = try Scenario.builtIn()
        let events = try parse(try await Meetup.withoutRanges.value)
        let ids = peerIDs(of: scenario)

        let bumps = events.filter { $0["type"] as? String == "bump" }
        func bump(seenBy node: String, with peer: String) -> [[String: Any]] {
            bumps.filter { $0["node"] as? String == ids[node] && $0["peer"] as? String == ids[peer] }
        }
        for (a, b, aName, bName) in [("rig", "alice", "Booth rig", "Alice"), ("bob", "carol", "Bob", "Carol")] {
            let ab = bump(seenBy: a, with: b)
            let ba = bump(seenBy: b, with: a)
            #expect(ab.count == 1 && ba.count == 1, "\(a)<->\(b)")
            #expect((ab.first?["card"] as? [String: Any])?["name"] as? String == bName)
            #expect((ba.first?["card"] as? [String: Any])?["name"] as? String == aName)
            #expect(ab.first?["bump_id"] as? Int == ba.first?["bump_id"] as? Int)
        }
        #expect(bumps.count == 4)

        for near in events where near["type"] as? String == "near" {
            let firstFound = events.firstIndex { $0["type"] as? String == "peer.found" && $0["node"] as? String == near["node"] as? String && $0["peer"] as? String == near["peer"] as? String }
            let nearIndex = events.firstIndex { ($0["seq"] as? Int) == (near["seq"] as? Int) }
            #expect(firstFound != nil && firstFound! < nearIndex!)
        }
        let lost = events.filter { $0["type"] as? String == "peer.lost" }
        #expect(!lost.isEmpty)
        #expect(lost.allSatisfy { $0["reason"] as? String == "timeout" && ($0["node"] as? String == ids["dave"] || $0["peer"] as? String == ids["dave"]) })
        #expect(events.allSatisfy { $0["node"] as? String != $0["peer"] as? String })
    }

    /// "Getting warmer": as Alice walks up to the rig, the rig's nearest peer is Alice, in
    /// ever closer bands, and she is immediate when they bump.
    @Test func theRigFollowsAliceAsTheNearestPeerUpToTheBump() async throws {
        let scenario = try Scenario.builtIn()
        let events = try parse(try await Meetup.withoutRanges.value)
        let ids = peerIDs(of: scenario)
        let rig = events.filter { $0["node"] as? String == ids["rig"] }
        let bump = try #require(rig.firstIndex { $0["type"] as? String == "bump" })
        let nearest = rig[..<bump].filter { $0["type"] as? String == "nearest" }
        let aliceBands = nearest.filter { $0["peer"] as? String == ids["alice"] }.map { $0["band"] as? String }
        #expect(nearest.last?["peer"] as? String == ids["alice"])
        #expect(aliceBands.suffix(3) == ["medium", "near", "immediate"])
    }
}
