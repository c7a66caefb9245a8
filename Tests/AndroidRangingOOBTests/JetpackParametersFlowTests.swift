import Testing
import UCI

@testable import AndroidRangingOOB

/// The Jetpack exchange with the board: parameters → "accepted" at once and the board session
/// with the OOB path's TLVs; stop → "stopped" after DEINIT; the ways a session ends under the
/// phone; the link's end. Every octet written by hand from the layout tables (`JetpackOctets`).
@Suite struct JetpackParametersFlowTests {
    typealias H = JetpackResponderHarness

    /// The TLVs the controller phone's parameters give the rig (controlee, responder), written out
    /// as `AndroidSessionConfiguration`'s table says, with the parameters' values.
    static let controleeTLVs: [(UInt8, [UInt8])] = [
        (0x00, [0x00]),  // DEVICE_TYPE controlee: the phone is the controller
        (0x01, [0x02]),  // RANGING_ROUND_USAGE DS-TWR deferred
        (0x02, [0x00]),  // STS_CONFIG static
        (0x03, [0x00]),  // MULTI_NODE_MODE unicast
        (0x04, [0x09]),  // CHANNEL_NUMBER 9, the phone's
        (0x05, [0x01]),  // NO_OF_CONTROLEE 1
        (0x06, [0xA1, 0xB2]),  // DEVICE_MAC_ADDRESS, the rig's
        (0x07, [0xC4, 0xD3]),  // DST_MAC_ADDRESS, the phone's UwbAddress
        (0x08, [0x60, 0x09]),  // SLOT_DURATION 2 ms = 2400 RSTU
        (0x09, [0xF0, 0x00, 0x00, 0x00]),  // RANGING_DURATION 240 ms: RANGING_UPDATE_RATE_AUTOMATIC
        (0x0C, [0x03]),  // RANGING_ROUND_CONTROL
        (0x11, [0x00]),  // DEVICE_ROLE responder: Jetpack's controller initiates
        (0x12, [0x03]),  // RFRAME_CONFIG SP3
        (0x14, [0x0A]),  // PREAMBLE_CODE_INDEX 10, the phone's
        (0x15, [0x02]),  // SFD_ID 2
        (0x1B, [0x06]),  // SLOTS_PER_RR 6
        (0x22, [0x01]),  // SCHEDULE_MODE time-scheduled
        (0x26, [0x00]),  // MAC_ADDRESS_MODE short
        (0x27, [0x08, 0x07]),  // VENDOR_ID, sessionKeyInfo octets 0-1
        (0x28, [0x01, 0x02, 0x03, 0x04, 0x05, 0x06]),  // STATIC_STS_IV, sessionKeyInfo octets 2-7
        (0x2C, [0x01]),  // HOPPING_MODE
    ]

    @Test func happyFlowByTheOctets() throws {
        var h = H()
        // Parameters → "accepted" (the rig A1 B2 is the controlee on 9/10) first, then the board session.
        let actions = h.phone(JetpackOctets.controllerParameters)
        #expect(actions.count == 2)
        #expect(actions.first == .sendToPhone(JetpackOctets.acceptedAsControlee))
        let session = try #require(H.starts(actions).first)
        #expect(session.sessionID == 0x1234_5678)
        #expect(session.appConfig.map(\.id.rawValue) == Self.controleeTLVs.map(\.0))
        #expect(session.appConfig.map(\.value) == Self.controleeTLVs.map(\.1))
        // The same session the OOB path starts for the equivalent Ranging Configuration.
        #expect(session == (try AndroidSessionConfiguration(Octets.uwbConfiguration, deviceAddress: [0xA1, 0xB2])))

        // ACTIVE: nothing to say, the phone's own ranging shows it works.
        #expect(h.receive(.boardSessionActive(session: H.sessionID)) == [])
        #expect(h.machine.state == .ranging(session))

        // Stop → the board session stopped; "stopped, requested" after DEINIT.
        #expect(h.phone(JetpackOctets.stop) == [.stopBoardSession(sessionID: H.sessionID)])
        #expect(h.receive(.boardSessionStopped(session: H.sessionID)) == [.sendToPhone(JetpackOctets.stopped(0x00))])
        #expect(h.machine.state == .idle)

        // And the phone may start again.
        #expect(H.starts(h.phone(JetpackOctets.controllerParameters)).count == 1)
    }

    /// A controlee phone gets the rig as controller and initiator, on the complex channel the rig
    /// chose, at the frequent interval (120 ms) with 1 ms slots.
    @Test func aControleePhoneGetsTheRigsComplexChannel() throws {
        var h = H()
        let actions = h.phone(JetpackOctets.controleeParameters)
        #expect(actions.first == .sendToPhone(JetpackOctets.acceptedAsController))
        let session = try #require(H.starts(actions).first)
        let values = Dictionary(uniqueKeysWithValues: session.appConfig.map { ($0.id.rawValue, $0.value) })
        #expect(values[0x00] == [0x01])  // DEVICE_TYPE controller
        #expect(values[0x11] == [0x01])  // DEVICE_ROLE initiator
        #expect(values[0x04] == [0x09])  // CHANNEL_NUMBER 9
        #expect(values[0x14] == [0x09])  // PREAMBLE_CODE_INDEX 9
        #expect(values[0x08] == [0xB0, 0x04])  // SLOT_DURATION 1 ms = 1200 RSTU
        #expect(values[0x09] == [0x78, 0x00, 0x00, 0x00])  // RANGING_DURATION 120 ms
        #expect(values[0x07] == [0xC4, 0xD3])  // DST_MAC_ADDRESS, the phone's
    }

    /// Infrequent (2) is 600 ms, not 120: Jetpack's constants are not in their names' order.
    @Test func infrequentIs600Milliseconds() throws {
        var h = H()
        let session = try #require(H.starts(h.phone(JetpackOctets.controller(16, 0x02))).first)
        #expect(session.appConfig.first { $0.id == .rangingDuration }?.value == [0x58, 0x02, 0x00, 0x00])
    }

    @Test func stopWhileIdleIsAnsweredAtOnce() {
        var h = H()
        #expect(h.phone(JetpackOctets.stop) == [.sendToPhone(JetpackOctets.stopped(0x00))])
        #expect(h.machine.state == .idle)
    }

    /// Stop while starting stops the start; "stopped" follows the DEINIT, a late ACTIVE says nothing.
    @Test func stopWhileStarting() {
        var h = H()
        _ = h.phone(JetpackOctets.controllerParameters)
        #expect(h.phone(JetpackOctets.stop) == [.stopBoardSession(sessionID: H.sessionID)])
        #expect(h.phone(JetpackOctets.stop) == [])  // asked twice: one stop, one answer
        #expect(h.receive(.boardSessionActive(session: H.sessionID)) == [])
        #expect(h.receive(.boardSessionStopped(session: H.sessionID)) == [.sendToPhone(JetpackOctets.stopped(0x00))])
    }

    @Test func aFailedStartIsStoppedAndThePhoneTold() {
        var h = H()
        _ = h.phone(JetpackOctets.controllerParameters)
        #expect(
            h.receive(.boardSessionFailed(session: H.sessionID, status: .rejected)) == [
                .log(.boardFailed(session: H.sessionID, status: .rejected)), .stopBoardSession(sessionID: H.sessionID),
                .sendToPhone(JetpackOctets.stopped(0x10)),
            ])
        // DEINIT: nothing more, the phone was told.
        #expect(h.receive(.boardSessionStopped(session: H.sessionID)) == [])
        #expect(h.machine.state == .idle)
    }

    @Test func theStartTimesOutAfterFiveSeconds() {
        var h = H()
        _ = h.phone(JetpackOctets.controllerParameters)
        #expect(h.tick(after: 5_000) == [])
        #expect(
            h.tick(after: 1) == [
                .log(.startTimedOut(session: H.sessionID, milliseconds: 5_000)), .stopBoardSession(sessionID: H.sessionID),
                .sendToPhone(JetpackOctets.stopped(0x10)),
            ])
        #expect(h.receive(.boardSessionActive(session: H.sessionID)) == [])
        // The stop itself times out too: logged, nothing to the phone.
        #expect(h.tick(after: 5_001) == [.log(.stopTimedOut(session: H.sessionID, milliseconds: 5_000))])
        #expect(h.machine.state == .idle)
    }

    @Test func theStopTimesOutWithoutAnAnswer() {
        var h = H()
        h.ranging()
        _ = h.phone(JetpackOctets.stop)
        #expect(h.tick(after: 5_000) == [])
        #expect(h.tick(after: 1) == [.log(.stopTimedOut(session: H.sessionID, milliseconds: 5_000))])
        #expect(h.machine.state == .idle)
    }

    @Test func aFailedStopSendsNoAnswer() {
        var h = H()
        h.ranging()
        _ = h.phone(JetpackOctets.stop)
        #expect(h.receive(.boardSessionFailed(session: H.sessionID, status: .failed)) == [.log(.stopFailed(session: H.sessionID, status: .failed))])
        #expect(h.machine.state == .idle)
    }

    @Test func theBoardDroppingTheSessionIsTold() {
        var h = H()
        h.ranging()
        #expect(
            h.receive(.boardSessionStopped(session: H.sessionID)) == [
                .log(.boardDroppedSession(session: H.sessionID)), .sendToPhone(JetpackOctets.stopped(0x11)),
            ])
        #expect(h.machine.state == .idle)
    }

    /// The link's end stops the board session and sends nothing; later inputs are ignored.
    @Test func linkEndWhileRanging() {
        var h = H()
        h.ranging()
        #expect(h.receive(.linkEnded) == [.log(.linkEnded(session: H.sessionID)), .stopBoardSession(sessionID: H.sessionID), .close])
        #expect(h.machine.state == .ended)
        #expect(h.phone(JetpackOctets.controllerParameters) == [])
        #expect(h.receive(.boardSessionStopped(session: H.sessionID)) == [])
        #expect(h.receive(.tick) == [])
    }

    @Test func linkEndWhileIdleStartingOrStopping() {
        var idle = H()
        #expect(idle.receive(.linkEnded) == [.close])
        var starting = H()
        _ = starting.phone(JetpackOctets.controllerParameters)
        #expect(starting.receive(.linkEnded) == [.log(.linkEnded(session: H.sessionID)), .stopBoardSession(sessionID: H.sessionID), .close])
        var stopping = H()
        stopping.ranging()
        _ = stopping.phone(JetpackOctets.stop)
        #expect(stopping.receive(.linkEnded) == [.close])
    }

    /// Notifications for other sessions are not this phone's.
    @Test func otherSessionsAreIgnored() {
        var h = H()
        _ = h.phone(JetpackOctets.controllerParameters)
        #expect(h.receive(.boardSessionActive(session: 0x0BAD)) == [])
        #expect(h.receive(.boardSessionStopped(session: 0x0BAD)) == [])
        #expect(h.receive(.boardSessionFailed(session: 0x0BAD, status: .failed)) == [])
        #expect(h.machine.boardSessionID == H.sessionID)
    }
}
