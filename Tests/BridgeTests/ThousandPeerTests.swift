import Events
import Foundation
import Glibc
import Synchronization
import Testing
@testable import Simulation

/// An event with a thousand visitors around one rig, at an accelerated clock, with a stdout that
/// stalls: range events may be shed, nothing else may go missing, and memory stays flat.
@Suite(.serialized) struct ThousandPeerTests {
    /// Keeps every line except `range` (counted), and stalls at the first range line after
    /// `stallAfter` of virtual time, like a consumer that stops reading for a while, until the
    /// world has run on for a virtual second: some 150 range lines, past the stream's 64-line
    /// buffer, so some are shed however fast this machine runs the world (a fixed three seconds
    /// of wall time was half a virtual second here, and less than the buffer under load).
    final class StallingOutput: EventOutput {
        private let world: World
        private let stallAfter: Int64
        private let storage = Mutex<(lines: [String], ranges: Int, stalled: Bool)>(([], 0, false))
        init(world: World, stallAfter: Int64) {
            self.world = world
            self.stallAfter = stallAfter
        }
        func write(line: String) throws {
            let isRange = line.contains(#""type":"range""#)
            let stall = storage.withLock { s in
                defer { s.stalled = s.stalled || (isRange && world.nowMilliseconds >= stallAfter) }
                return !s.stalled && isRange && world.nowMilliseconds >= stallAfter
            }
            if stall {
                let until = world.nowMilliseconds + 1_000
                let giveUp = ContinuousClock.now + .seconds(120)
                while world.nowMilliseconds < until, ContinuousClock.now < giveUp { usleep(10_000) }
            }
            storage.withLock { s in
                if isRange { s.ranges += 1 } else { s.lines.append(line) }
            }
        }
        var lines: [String] { storage.withLock { $0.lines } }
        var ranges: Int { storage.withLock { $0.ranges } }
    }

    /// The world exists only once the driver does; the output is set right after.
    final class OutputBox: EventOutput {
        let target = Mutex<StallingOutput?>(nil)
        func write(line: String) throws { try target.withLock { $0 }?.write(line: line) }
    }

    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func aThousandVisitorsLoseNoNonRangeEventAndMemoryStaysBounded() async throws {
        let visitors = 1_000
        let duration = Double(ProcessInfo.processInfo.environment["CROWD_SECONDS"] ?? "") ?? 60
        // the software's scaling, on private air (`Scenario.crowd`); the hall evaluation measures the air
        let scenario = Scenario.crowd(visitors: visitors, duration: duration, seed: 7, bumpEvery: 50, sharedAir: false)
        var options = SimulationDriver.Options()
        options.speed = nil
        options.epochMilliseconds = fixedEpoch
        let output = OutputBox()
        let stream = EventStream(output: output, includesRanges: true, bufferedLines: 64)
        let driver = SimulationDriver(scenario: scenario, options: options, events: stream, logger: quietLogger)
        let world = driver.world
        let stalling = StallingOutput(world: world, stallAfter: 20_000)
        output.target.withLock { $0 = stalling }
        let samples = Mutex<[Int64: Int]>([:])
        let started = ContinuousClock.now
        try await driver.run {
            let now = world.nowMilliseconds
            if now % 10_000 == 0 { samples.withLock { $0[now] = Self.residentBytes() } }
            return false
        }
        stream.drain()
        let elapsed = ContinuousClock.now - started
        let events = try parse(stalling.lines)
        let ids = driver.identities.mapValues(\.peerID.description)
        let rig = try #require(ids["rig"])
        let byType = Dictionary(grouping: events) { $0["type"] as? String ?? "" }.mapValues(\.count)
        let rss = samples.withLock { $0 }.sorted { $0.key < $1.key }
        print("1000 visitors, \(duration) s simulated in \(elapsed): \(byType.sorted { $0.key < $1.key }), ranges written \(stalling.ranges), RSS MB \(rss.map { "\($0.key / 1000)s:\($0.value >> 20)" })")

        // Shedding happened (the stall guarantees it), and only range events were shed.
        let stats = events.filter { $0["type"] as? String == "stats" }
        #expect(stats.reduce(0) { $0 + ($1["shed_ranges"] as? Int ?? 0) } > 0)
        #expect(stats.allSatisfy { ($0["shed_inputs"] as? Int) == 0 && ($0["evicted"] as? Int) == 0 })

        // Per observer and peer, found/lost and near/far alternate: a lost line would break the pattern.
        var state: [String: (found: Bool, near: Bool)] = [:]
        for event in events {
            guard let node = event["node"] as? String, let peer = event["peer"] as? String, let type = event["type"] as? String else { continue }
            let key = node + peer
            var s = state[key] ?? (false, false)
            switch type {
            case "peer.found": #expect(!s.found, "\(key) found twice"); s = (true, false)
            case "peer.lost": #expect(s.found, "\(key) lost before found"); s = (false, false)
            case "near": #expect(s.found && !s.near, "\(key) near twice"); s.near = true
            case "far": #expect(s.found && s.near, "\(key) far without near"); s.near = false
            case "bump", "rough", "nearest": #expect(s.found, "\(key) \(type) before found")
            default: break
            }
            state[key] = s
        }
        // Every visitor is found by the rig, and every visitor finds the rig.
        #expect(Set(events.filter { $0["type"] as? String == "peer.found" && $0["node"] as? String == rig }.compactMap { $0["peer"] as? String }).count == visitors)
        // Every touch made a bump on both sides, and no bump is one-sided.
        let bumps = events.filter { $0["type"] as? String == "bump" }
        for node in scenario.nodes where node.touchesTheRig(before: duration) {
            let visitor = try #require(ids[node.name])
            #expect(bumps.count { $0["node"] as? String == rig && $0["peer"] as? String == visitor } == 1, "\(node.name)")
        }
        for bump in bumps {
            #expect(bumps.contains { $0["node"] as? String == bump["peer"] as? String && $0["peer"] as? String == bump["node"] as? String && $0["bump_id"] as? Int == bump["bump_id"] as? Int })
        }
        // The rig tracked everyone within its cap and ranged within its budget.
        #expect(stats.allSatisfy { ($0["peers"] as? Int ?? .max) <= 1_024 && ($0["ranging"] as? Int ?? .max) <= 8 })
        // Memory: all visitors are in the hall after a fifth of the run; from a third on it stays flat.
        let settled = try #require(rss.first { Double($0.key) >= duration * 1000 / 3 }?.value)
        let last = try #require(rss.last?.value)
        #expect(last - settled < 48 << 20, "resident set grew from \(settled >> 20) MB to \(last >> 20) MB")
    }
}
