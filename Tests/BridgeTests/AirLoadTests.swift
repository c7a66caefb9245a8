import Testing
import UCI

@testable import Bridge

/// `AirLoad`: the air is full past 30 % failed rounds among working sessions, clear again below
/// 15 % once it has been full for a minute, and failures of sessions that never worked (or
/// stopped working 2 s ago) do not count.
struct AirLoadTests {
    /// One peer's rounds as `NodeCore` counts them: its last good round kept beside the load.
    struct Rounds {
        var load = AirLoad()
        var lastSuccess: Int64?
        var verdicts: [Bool] = []
        var now: Int64 = 0

        @discardableResult
        mutating func round(failed: Bool, at time: Int64) -> Bool? {
            let verdict = load.record(failed: failed, lastSuccess: lastSuccess, now: time)
            if !failed { lastSuccess = time }
            if let verdict { verdicts.append(verdict) }
            return verdict
        }

        /// 200 rounds 100 ms apart, every `n`-th failed.
        mutating func phase(failingEvery n: Int) {
            for index in 0..<200 {
                round(failed: index % n == 0, at: now)
                now += 100
            }
        }
    }

    @Test func fullPastThirtyPercentClearBelowFifteen() {
        var rounds = Rounds()
        // 200 rounds, one in four failed: 25 %, not full
        rounds.phase(failingEvery: 4)
        #expect(rounds.verdicts.isEmpty && !rounds.load.isFull)
        // then every second round fails: past 30 % it is full, once
        rounds.phase(failingEvery: 2)
        #expect(rounds.verdicts == [true] && rounds.load.isFull)
        // one in five failed (20 %): still full, hysteresis
        rounds.phase(failingEvery: 5)
        #expect(rounds.verdicts == [true])
        // one in ten: clear, once the minute since it filled has passed
        rounds.phase(failingEvery: 10)
        #expect(rounds.verdicts == [true] && rounds.load.isFull)
        rounds.phase(failingEvery: 10)
        #expect(rounds.verdicts == [true, false] && !rounds.load.isFull)
    }

    @Test func failuresOfASessionThatDoesNotWorkDoNotCount() {
        var rounds = Rounds()
        // a session that never succeeded: 300 RX timeouts are not the air's doing
        for index in 0..<300 { #expect(rounds.round(failed: true, at: Int64(index) * 100) == nil) }
        #expect(rounds.load.failureShare == 0)
        // one success, then failures for longer than 2 s: only the first 2 s count
        rounds.round(failed: false, at: 40_000)
        for index in 1...100 { rounds.round(failed: true, at: 40_000 + Int64(index) * 100) }
        #expect(rounds.load.failureShare == 20.0 / 21.0)
        // a peer that is gone and comes back has no good round on record
        rounds.lastSuccess = nil
        rounds.round(failed: true, at: 50_100)
        #expect(rounds.load.failureShare == 20.0 / 21.0)
    }

    @Test func onlyMeasurementsWithADistanceAreSuccesses() {
        #expect(!AirLoad.failed(.ok))
        #expect(!AirLoad.failed(.okNegativeDistanceReport))
        #expect(AirLoad.failed(.rangingRxTimeout))
    }
}
