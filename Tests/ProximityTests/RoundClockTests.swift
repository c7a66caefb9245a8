import Bridge
import Testing
@testable import Proximity

@Suite struct RoundClockTests {
    @Test func roundsAreSpacedByTheRadiosIntervalWhateverTheHostSaw() {
        var clock = RoundClock()
        let r22 = clock.time(ofRound: 10, reportedInterval: 100, fallbackInterval: 200, hostTime: 5_000)
        #expect(r22 == 5_000)
        // Two notifications read in one burst, late: still 100 ms apart.
        let r23 = clock.time(ofRound: 11, reportedInterval: 100, fallbackInterval: 200, hostTime: 5_180)
        #expect(r23 == 5_100)
        let r24 = clock.time(ofRound: 12, reportedInterval: 100, fallbackInterval: 200, hostTime: 5_181)
        #expect(r24 == 5_200)
        // A missing round shows as a 200 ms step.
        let r25 = clock.time(ofRound: 14, reportedInterval: 100, fallbackInterval: 200, hostTime: 5_405)
        #expect(r25 == 5_400)
    }

    @Test func reAnchorsWhenTheCounterRestartsOrDrifts() {
        var clock = RoundClock()
        _ = clock.time(ofRound: 500, reportedInterval: 100, fallbackInterval: 100, hostTime: 1_000)
        // A new session counts from 1 again.
        let r26 = clock.time(ofRound: 1, reportedInterval: 100, fallbackInterval: 100, hostTime: 9_000)
        #expect(r26 == 9_000)
        // The host sees the round far later than the counter says: trust the host.
        let r27 = clock.time(ofRound: 2, reportedInterval: 100, fallbackInterval: 100, hostTime: 10_500)
        #expect(r27 == 10_500)
        // Within an interval ahead of the host, the counter's time stands ...
        _ = clock.time(ofRound: 3, reportedInterval: 100, fallbackInterval: 100, hostTime: 10_600)
        let ahead = clock.time(ofRound: 4, reportedInterval: 100, fallbackInterval: 100, hostTime: 10_650)
        #expect(ahead == 10_700)
        // ... further ahead, the anchor itself was read late: re-anchor on the host.
        let early = clock.time(ofRound: 5, reportedInterval: 100, fallbackInterval: 100, hostTime: 10_640)
        #expect(early == 10_640)
    }

    @Test func usesTheConfiguredIntervalWhenTheRadioReportsNone() {
        var clock = RoundClock()
        _ = clock.time(ofRound: 1, reportedInterval: 0, fallbackInterval: 100, hostTime: 0)
        let r30 = clock.time(ofRound: 3, reportedInterval: 0, fallbackInterval: 100, hostTime: 230)
        #expect(r30 == 200)
    }
}
