import Testing
import UCI

@testable import NearbyInteractionAccessory

/// How a session ends other than by the phone's 0x0C: the phone leaves, the board never becomes
/// active, refuses, fails a command, or stops on its own. The phone is told only what the board
/// confirmed: no 0x02 without ACTIVE, no 0x03 without DEINIT, nothing after it has gone. Board
/// states and reason codes from FiRa UCI's SESSION_STATUS_NTF (AOSP's pdl `SessionState`,
/// `ReasonCode`).
@Suite struct AccessorySessionEndingTests {
    typealias H = AccessorySessionHarness
    static let sessionID: UInt32 = 0x1234_5678

    func ranging() -> H {
        var h = H()
        _ = h.phone([0x0A])
        _ = h.phone([0x0B] + Blobs.version1_1)
        _ = h.boardStarts(Self.sessionID)
        return h
    }

    @Test func disconnectWhileRangingStopsTheBoardAndTellsNobody() {
        var h = ranging()
        let actions = h.receive(.phoneDisconnected)
        #expect(H.stops(actions) == [Self.sessionID])
        #expect(H.toPhone(actions).isEmpty)
        #expect(actions.last == .sessionEnded)
        #expect(h.machine.state == .ended)
        // Gone: the board's DEINIT, a write, a tick are all ignored.
        #expect(h.board(Self.sessionID, .deinitialized).isEmpty)
        #expect(h.phone([0x0A]).isEmpty)
        #expect(h.tick(after: 60_000).isEmpty)
    }

    @Test func disconnectWhileStartingStopsTheBoard() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        let actions = h.receive(.phoneDisconnected)
        #expect(H.stops(actions) == [Self.sessionID])
        #expect(H.toPhone(actions).isEmpty)
        #expect(h.board(Self.sessionID, .active).isEmpty, "no 0x02 to a gone phone")
    }

    @Test func disconnectWithoutASessionJustEnds() {
        var h = H()
        _ = h.phone([0x0A])
        #expect(h.receive(.phoneDisconnected) == [.sessionEnded])
    }

    /// While stopping, the node's stop is already under way: no second one.
    @Test func disconnectWhileStoppingDoesNotStopTwice() {
        var h = ranging()
        _ = h.phone([0x0C])
        #expect(h.receive(.phoneDisconnected) == [.sessionEnded])
    }

    @Test func boardNeverActiveTimesOut() {
        var h = H(); _ = h.phone([0x0A])
        _ = h.phone([0x0B] + Blobs.version1_1)
        _ = h.board(Self.sessionID, .initialized)
        _ = h.board(Self.sessionID, .idle)
        // The deadline is 5 s after the start was asked; at exactly 5 s it has not passed.
        #expect(h.tick(after: 5_000).isEmpty)
        let timeout = h.tick(after: 1)
        #expect(H.logs(timeout) == [.startTimedOut(session: Self.sessionID, milliseconds: 5_000)])
        #expect(H.stops(timeout) == [Self.sessionID])
        #expect(H.toPhone(timeout).isEmpty)
        // A late ACTIVE does not make a 0x02; the DEINIT does not make a 0x03 (the phone asked no stop).
        #expect(h.board(Self.sessionID, .active).isEmpty)
        #expect(h.boardStops(Self.sessionID).isEmpty)
        #expect(h.machine.state == .stopped)
    }

    /// A start timeout from the settings, not a constant.
    @Test func startTimeoutIsASetting() {
        var h = H()
        h.machine = AccessorySession(
            settings: AccessorySessionSettings(capabilities: Blobs.board, shortAddress: 1, startTimeoutMilliseconds: 200))
        _ = h.phone([0x0B] + Blobs.version1_1)
        #expect(h.tick(after: 200).isEmpty)
        #expect(H.stops(h.tick(after: 1)) == [Self.sessionID])
    }

    /// START refused with a configuration error: IDLE with that reason.
    @Test func boardRefusesStart() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        _ = h.board(Self.sessionID, .initialized)
        let refused = h.board(Self.sessionID, .idle, .slotLengthNotSupported)
        #expect(
            refused == [
                .log(.boardRefusedStart(session: Self.sessionID, reason: .slotLengthNotSupported)),
                .stopBoardSession(sessionID: Self.sessionID),
            ])
        #expect(h.board(Self.sessionID, .deinitialized).isEmpty)
    }

    @Test func startCommandFailure() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        let failed = h.receive(.boardCommandFailed(session: Self.sessionID, status: .maxSessionsExceeded))
        #expect(
            failed == [
                .log(.startCommandFailed(session: Self.sessionID, status: .maxSessionsExceeded)),
                .stopBoardSession(sessionID: Self.sessionID),
            ])
        // SESSION_INIT never went through, so the board does not know the session: that is gone too.
        #expect(h.receive(.boardCommandFailed(session: Self.sessionID, status: .sessionNotExist)).isEmpty)
        #expect(h.machine.state == .stopped)
    }

    /// SET_APP_CONFIG or START on a session the board does not know: nothing to stop.
    @Test func startOfASessionTheBoardDoesNotKnow() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        let failed = h.receive(.boardCommandFailed(session: Self.sessionID, status: .sessionNotExist))
        #expect(failed == [.log(.startCommandFailed(session: Self.sessionID, status: .sessionNotExist))])
        #expect(h.machine.state == .stopped)
    }

    @Test func boardDropsTheSessionWhileStarting() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        let dropped = h.board(Self.sessionID, .deinitialized, .sessionKeyNotFound)
        #expect(dropped == [.log(.boardDroppedStart(session: Self.sessionID, reason: .sessionKeyNotFound))])
        #expect(h.machine.state == .stopped)
    }

    /// Ranging ends under the phone (retries exhausted): deinitialised, then 0x03.
    @Test func boardStopsRangingOnItsOwn() {
        var h = ranging()
        let idle = h.board(Self.sessionID, .idle, .maxRangingRoundRetryCountReached)
        #expect(H.logs(idle) == [.boardStoppedRanging(session: Self.sessionID, reason: .maxRangingRoundRetryCountReached)])
        #expect(H.stops(idle) == [Self.sessionID])
        #expect(H.toPhone(idle).isEmpty, "0x03 waits for DEINIT")
        #expect(H.toPhone(h.board(Self.sessionID, .deinitialized)) == [[0x03]])
    }

    @Test func boardDeinitialisesWhileRanging() {
        var h = ranging()
        let gone = h.board(Self.sessionID, .deinitialized, .sessionStoppedDueToMaxSTSIndexValue)
        #expect(H.toPhone(gone) == [[0x03]])
        #expect(!H.commandsBoard(gone))
        #expect(h.machine.state == .stopped)
    }

    @Test func commandFailureWhileRangingKeepsRanging() {
        var h = ranging()
        let before = h.machine.state
        let failed = h.receive(.boardCommandFailed(session: Self.sessionID, status: .failed))
        #expect(failed == [.log(.commandFailedWhileRanging(session: Self.sessionID, status: .failed))])
        #expect(h.machine.state == before)
    }

    /// The board never deinitialises: no 0x03 (nobody saw the stop).
    @Test func stopTimesOutWithoutDidStop() {
        var h = ranging()
        _ = h.phone([0x0C])
        let failed = h.receive(.boardCommandFailed(session: Self.sessionID, status: .failed))
        #expect(failed == [.log(.deinitFailed(session: Self.sessionID, status: .failed))])
        #expect(h.tick(after: 5_000).isEmpty)
        #expect(h.tick(after: 1) == [.log(.stopTimedOut(session: Self.sessionID, milliseconds: 5_000))])
        #expect(h.board(Self.sessionID, .deinitialized).isEmpty)
        #expect(h.machine.state == .stopped)
    }

    /// A DEINIT the board no longer has (SESSION_NOT_EXIST) is a stop: 0x03.
    @Test func deinitOfAnUnknownSessionIsAStop() {
        var h = ranging()
        _ = h.phone([0x0C])
        #expect(h.receive(.boardCommandFailed(session: Self.sessionID, status: .sessionNotExist)) == [.sendToPhone(.uwbDidStop)])
    }
}
