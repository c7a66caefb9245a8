import Testing
import UCI

@testable import AndroidRangingOOB

/// How a session ends other than by the phone's Stop Ranging: the board fails or drops it, the
/// start or stop times out (on the explicit clock), or the link ends.
@Suite struct AndroidOOBResponderEndingTests {
    typealias H = AndroidOOBResponderHarness

    /// The rig's own Stop Ranging {UWB}, version 1.
    static let stopRanging: [UInt8] = [0x01, 0x06, 0x01, 0x00]

    @Test func aFailedStartIsStoppedAndThePhoneToldToStop() {
        var h = H()
        _ = h.phone(Octets.configurationV1)
        #expect(
            h.receive(.boardSessionFailed(session: H.sessionID, status: .rejected)) == [
                .log(.boardFailed(session: H.sessionID, status: .rejected)), .stopBoardSession(sessionID: H.sessionID),
                .sendToPhone(Self.stopRanging),
            ])
        // DEINIT: no Stop Ranging Response, since the phone did not ask.
        #expect(h.receive(.boardSessionStopped(session: H.sessionID)) == [])
        #expect(h.machine.state == .idle)
    }

    @Test func theStartTimesOutAfterFiveSeconds() {
        var h = H()
        _ = h.phone(Octets.configurationV1)
        #expect(h.tick(after: 5_000) == [])
        #expect(
            h.tick(after: 1) == [
                .log(.startTimedOut(session: H.sessionID, milliseconds: 5_000)), .stopBoardSession(sessionID: H.sessionID),
                .sendToPhone(Self.stopRanging),
            ])
        // A late ACTIVE does not bring a Configuration Response.
        #expect(h.receive(.boardSessionActive(session: H.sessionID)) == [])
    }

    @Test func theStopTimesOutWithoutAResponse() {
        var h = H()
        h.ranging()
        _ = h.phone(Self.stopRanging)
        #expect(h.tick(after: 5_000) == [])
        #expect(h.tick(after: 1) == [.log(.stopTimedOut(session: H.sessionID, milliseconds: 5_000))])
        #expect(h.machine.state == .idle)
    }

    @Test func aFailedStopSendsNoResponse() {
        var h = H()
        h.ranging()
        _ = h.phone(Self.stopRanging)
        #expect(h.receive(.boardSessionFailed(session: H.sessionID, status: .failed)) == [.log(.stopFailed(session: H.sessionID, status: .failed))])
        #expect(h.machine.state == .idle)
    }

    @Test func theBoardDroppingTheSessionEndsItForThePhone() {
        var h = H()
        h.ranging()
        #expect(
            h.receive(.boardSessionStopped(session: H.sessionID)) == [
                .log(.boardDroppedSession(session: H.sessionID)), .sendToPhone(Self.stopRanging),
            ])
        #expect(h.machine.state == .idle)
    }

    /// The link's end stops the board session and sends nothing; later inputs are ignored.
    @Test func linkEndWhileRanging() {
        var h = H()
        h.ranging()
        #expect(h.receive(.linkEnded) == [.log(.linkEnded(session: H.sessionID)), .stopBoardSession(sessionID: H.sessionID), .close])
        #expect(h.machine.state == .ended)
        #expect(h.phone([0x01, 0x00, 0x01, 0x00]) == [])
        #expect(h.receive(.boardSessionStopped(session: H.sessionID)) == [])
    }

    @Test func linkEndWhileIdleOrStopping() {
        var idle = H()
        #expect(idle.receive(.linkEnded) == [.close])
        var stopping = H()
        stopping.ranging()
        _ = stopping.phone(Self.stopRanging)
        #expect(stopping.receive(.linkEnded) == [.close])
    }
}
