import Bridge
import Foundation
import Synchronization
import Testing

/// A host whose wall clock is stepped (NTP after a Pi boots without a real-time clock, an operator
/// setting the time) while its steady clock runs on.
private final class SteppedWallClock: TimeSource {
    private let offset = Atomic<Int64>(0)

    func step(byMilliseconds delta: Int64) { _ = offset.add(delta, ordering: .relaxed) }
    func nowMilliseconds() -> Int64 { SystemClock().nowMilliseconds() }
    func wallMilliseconds() -> Int64 { SystemClock().wallMilliseconds() + offset.load(ordering: .relaxed) }
}

/// Issue 34, item 1: timeouts run on the steady clock, the wall clock only stamps events.
@Suite struct WallClockStepTests {
    /// Ranging against the world over loopback TCP, the wall clock jumps an hour forward, then
    /// two hours back: no peer is lost (a forward step of more than the 6 s peer timeout lost
    /// every peer while timers read the wall clock), ranging goes on, and the timestamps follow
    /// the wall clock.
    @Test(.timeLimit(.minutes(1))) func aSteppedWallClockMovesOnlyTheTimestamps() async throws {
        let clock = SteppedWallClock()
        let rig = try await WorldRig(peerID: 0xFFFF_0000_0000_0003, time: clock)
        let firstRange = try await rig.waitFor(#""status":"OK""#, after: 0)
        clock.step(byMilliseconds: 3_600_000)
        let forward = rig.output.lines.count
        let afterForward = try await rig.waitFor(rangesAfter: forward, count: 60)
        clock.step(byMilliseconds: -7_200_000)
        let backward = rig.output.lines.count
        let afterBackward = try await rig.waitFor(rangesAfter: backward, count: 60)
        let events = try await rig.stop()

        func seconds(_ index: Int) throws -> Double {
            let text = try #require(events[index]["ts"] as? String)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return try #require(formatter.date(from: text)).timeIntervalSince1970
        }
        #expect(!events.contains { $0["type"] as? String == "peer.lost" }, "a wall-clock step lost a peer")
        #expect(try seconds(afterForward) - seconds(firstRange) > 3_590)
        #expect(try seconds(afterBackward) - seconds(firstRange) < -3_590)
        #expect(try seconds(afterBackward) - seconds(firstRange) > -3_610)
    }
}

extension WorldRig {
    /// The index of the `count`th successful range after line `index`, ticking the node while it
    /// waits.
    func waitFor(rangesAfter index: Int, count: Int) async throws -> Int {
        var found = index
        for _ in 0..<count { found = try await waitFor(#""status":"OK""#, after: found + 1) }
        return found
    }
}
