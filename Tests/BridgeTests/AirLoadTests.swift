import PeerProtocol
import Testing
import UCI

@testable import Bridge

/// `AirLoad`: the air is full past 30 % failed rounds among working sessions, clear again below
/// 15 % once it has been full for a minute, and failures of sessions that never worked (or stopped working 2 s ago) do not count.
struct AirLoadTests {
    let peer = PeerID(7)

    @Test func fullPastThirtyPercentClearBelowFifteen() {
        var load = AirLoad()
        var verdicts: [Bool] = []
        func round(_ failed: Bool, at now: Int64) {
            if let verdict = load.record(peer, failed: failed, now: now) { verdicts.append(verdict) }
        }
        var now: Int64 = 0
        // 200 rounds, one in four failed: 25 %, not full
        for index in 0..<200 {
            round(index % 4 == 0, at: now)
            now += 100
        }
        #expect(verdicts.isEmpty && !load.isFull)
        // then every second round fails: past 30 % it is full, once
        for index in 0..<200 {
            round(index % 2 == 0, at: now)
            now += 100
        }
        #expect(verdicts == [true] && load.isFull)
        // one in five failed (20 %): still full, hysteresis
        for index in 0..<200 {
            round(index % 5 == 0, at: now)
            now += 100
        }
        #expect(verdicts == [true])
        // one in ten: clear, once the minute since it filled has passed
        for index in 0..<200 {
            round(index % 10 == 0, at: now)
            now += 100
        }
        #expect(verdicts == [true] && load.isFull)
        for index in 0..<200 {
            round(index % 10 == 0, at: now)
            now += 100
        }
        #expect(verdicts == [true, false] && !load.isFull)
    }

    @Test func failuresOfASessionThatDoesNotWorkDoNotCount() {
        var load = AirLoad()
        // a session that never succeeded: 300 RX timeouts are not the air's doing
        for index in 0..<300 { #expect(load.record(peer, failed: true, now: Int64(index) * 100) == nil) }
        #expect(load.failureShare == 0)
        // one success, then failures for longer than 2 s: only the first 2 s count
        _ = load.record(peer, failed: false, now: 40_000)
        for index in 1...100 { _ = load.record(peer, failed: true, now: 40_000 + Int64(index) * 100) }
        #expect(load.failureShare == 20.0 / 21.0)
        load.forget(peer)
        _ = load.record(peer, failed: true, now: 50_100)
        #expect(load.failureShare == 20.0 / 21.0)
    }

    @Test func onlyMeasurementsWithADistanceAreSuccesses() {
        #expect(!AirLoad.failed(.ok))
        #expect(!AirLoad.failed(.okNegativeDistanceReport))
        #expect(AirLoad.failed(.rangingRxTimeout))
    }
}
