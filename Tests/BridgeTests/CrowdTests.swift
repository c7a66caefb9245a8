import Events
import Foundation
import Glibc
import Synchronization
import Testing

@testable import Simulation

/// Many peers, few ranging sessions: the scheduler rotates, nobody is lost, nothing important dropped.
@Suite(.serialized) struct CrowdTests {
    /// Runs a crowd as fast as possible; returns the parsed events and the driver (for identities).
    func run(_ scenario: Scenario, output: any EventOutput, ranges: Bool = false, bufferedLines: Int? = nil) async throws -> (EventStream, SimulationDriver) {
        var options = SimulationDriver.Options()
        options.speed = nil
        options.epochMilliseconds = fixedEpoch
        let stream = EventStream(output: output, includesRanges: ranges, bufferedLines: bufferedLines)
        let driver = SimulationDriver(scenario: scenario, options: options, events: stream, logger: quietLogger)
        try await driver.run()
        stream.drain()
        return (stream, driver)
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func aSmallCrowdRotatesThroughFourSessionsAndEveryToucherBumps(seed: UInt64) async throws {
        let scenario = Scenario.crowd(visitors: 24, duration: 120, seed: seed, bumpEvery: 4, rigSessions: 4)
        let output = CollectedEvents()
        let (_, driver) = try await run(scenario, output: output, ranges: true)
        let events = try parse(output.lines)
        let (status, message) = try validateAgainstSchema(output.lines)
        #expect(status == 0, "\(message)")
        #expect(scenario.nodes.count { $0.touchesTheRig(before: scenario.duration) } >= 4)
        let ids = driver.identities.mapValues(\.peerID.description)
        let rig = try #require(ids["rig"])
        let atRig = events.filter { $0["node"] as? String == rig }
        let stats = atRig.filter { $0["type"] as? String == "stats" }
        #expect(!stats.isEmpty)
        #expect(stats.allSatisfy { ($0["budget"] as? Int) == 4 && ($0["ranging"] as? Int ?? 99) <= 4 })
        #expect(atRig.contains { $0["type"] as? String == "rough" })
        for (index, node) in scenario.nodes.enumerated() where node.touchesTheRig(before: scenario.duration) {
            let visitor = try #require(ids[node.name])
            let rigSide = atRig.filter { $0["type"] as? String == "bump" && $0["peer"] as? String == visitor }
            let visitorSide = events.filter { $0["type"] as? String == "bump" && $0["node"] as? String == visitor && $0["peer"] as? String == rig }
            #expect(
                rigSide.count == 1 && visitorSide.count == 1,
                "\(node.name) (body \(index)): \(rigSide.count) bumps at the rig, \(visitorSide.count) at the visitor")
        }
    }
}

extension Scenario.Node {
    /// Whether the path comes within 10 cm of the origin (the crowd's rig) and stays there 3 s,
    /// ending before `end`.
    func touchesTheRig(before end: Double) -> Bool {
        zip(path, path.dropFirst()).contains { a, b in
            (a.x * a.x + a.y * a.y).squareRoot() < 0.1 && a.x == b.x && a.y == b.y && b.t - a.t >= 3 && b.t < end
        }
    }
}
