import Testing
import UCI

@testable import AndroidRangingOOB

/// The responder's side of the specification's connection-based flow (Capability Request →
/// Capability Response, Configuration → optional Configuration Response, Stop Ranging →
/// optional Stop Ranging Response), every octet written by hand from the spec's message table
/// and the PDL layouts (`Octets`), not by the encoder.
@Suite struct AndroidOOBResponderFlowTests {
    typealias H = AndroidOOBResponderHarness

    @Test func happyFlowByTheOctets() throws {
        var h = H()
        // Capability Request (v1, UWB) → the 24-octet Capability Response; no board command.
        let capability = h.phone([0x01, 0x00, 0x01, 0x00])
        #expect(capability == [.sendToPhone(Octets.capabilityResponseV1)])
        #expect(h.machine.state == .idle)

        // Configuration → the board session with AndroidSessionConfiguration's TLVs; nothing to the phone yet.
        let configure = h.phone(Octets.configurationV1)
        let expected = try AndroidSessionConfiguration(Octets.uwbConfiguration, deviceAddress: [0xA1, 0xB2])
        #expect(configure == [.startBoardSession(expected)])
        #expect(expected.sessionID == H.sessionID)
        #expect(h.machine.boardSessionID == H.sessionID)

        // ACTIVE → Configuration Response: version 1, id 0x3, configured {UWB}.
        #expect(h.receive(.boardSessionActive(session: H.sessionID)) == [.sendToPhone([0x01, 0x03, 0x01, 0x00])])

        // Stop Ranging {UWB} → the board session stopped; the response waits for DEINIT.
        #expect(h.phone([0x01, 0x06, 0x01, 0x00]) == [.stopBoardSession(sessionID: H.sessionID)])
        #expect(h.receive(.boardSessionStopped(session: H.sessionID)) == [.sendToPhone([0x01, 0x07, 0x01, 0x00])])
        #expect(h.machine.state == .idle)

        // And the phone may configure again.
        #expect(H.starts(h.phone(Octets.configurationV1)).count == 1)
    }

    /// Versions 2 and 3 add the transitioning octet (0: not supported) and the device type
    /// (3: tag) after the blocks; replies take the version of the message they answer.
    @Test func repliesTakeTheRequestsVersion() {
        var h = H()
        let v2 = [0x02, 0x01, 0x01, 0x00] + Octets.uwbCapabilityBlock + [0x00, 0x03, 0x00]
        #expect(H.toPhone(h.phone([0x02, 0x00, 0x01, 0x00])) == [v2])
        let v3 = [0x03, 0x01, 0x01, 0x00] + Octets.uwbCapabilityBlock + [0x00, 0x03, 0x00]
        #expect(H.toPhone(h.phone([0x03, 0x00, 0x01, 0x00])) == [v3])

        #expect(H.starts(h.phone(Octets.configurationV3)).count == 1)
        #expect(H.toPhone(h.receive(.boardSessionActive(session: H.sessionID))) == [[0x03, 0x03, 0x01, 0x00]])
    }

    /// A request without UWB gets an empty response: the rig offers only what it has.
    @Test func aRequestWithoutUWBGetsAnEmptyResponse() {
        var h = H()
        // Capability Request for BLE RSSI (bit 3) → bitmap 0, no blocks.
        #expect(H.toPhone(h.phone([0x01, 0x00, 0x08, 0x00])) == [[0x01, 0x01, 0x00, 0x00]])
    }

    /// The offer is the board's: a board on channel 9 alone offers bit 9 alone.
    @Test func theCapabilityIsTheBoards() {
        var h = H()
        h.machine = AndroidOOBResponder(
            settings: AndroidOOBResponderSettings(
                board: AndroidBoardCapabilities(channels: [9], minimumIntervalMilliseconds: 240, minimumSlotDurationMilliseconds: 2),
                shortAddress: [0x01, 0x02]))
        let block: [UInt8] = [
            0x00, 0x14, 0x01, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0F, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xF0, 0x00, 0x02, 0x03,
        ]
        #expect(H.toPhone(h.phone([0x01, 0x00, 0x01, 0x00])) == [[0x01, 0x01, 0x01, 0x00] + block])
    }

    /// Capability Requests are answered in any state, without touching the session.
    @Test func aCapabilityRequestWhileRangingChangesNothing() {
        var h = H()
        h.ranging()
        let before = h.machine.state
        #expect(h.phone([0x01, 0x00, 0x01, 0x00]) == [.sendToPhone(Octets.capabilityResponseV1)])
        #expect(h.machine.state == before)
    }

    /// Stop Ranging with nothing running is answered at once.
    @Test func stopWhileIdleIsAnsweredAtOnce() {
        var h = H()
        #expect(h.phone([0x01, 0x06, 0x01, 0x00]) == [.sendToPhone([0x01, 0x07, 0x01, 0x00])])
        #expect(h.machine.state == .idle)
    }

    /// Stop Ranging while starting stops the start; the response follows DEINIT, and no
    /// Configuration Response is sent for the session.
    @Test func stopWhileStarting() {
        var h = H()
        _ = h.phone(Octets.configurationV1)
        #expect(h.phone([0x01, 0x06, 0x01, 0x00]) == [.stopBoardSession(sessionID: H.sessionID)])
        #expect(h.receive(.boardSessionActive(session: H.sessionID)) == [])
        #expect(h.receive(.boardSessionStopped(session: H.sessionID)) == [.sendToPhone([0x01, 0x07, 0x01, 0x00])])
    }

    /// A Stop Ranging that does not name UWB leaves the session ranging and says nothing stopped.
    @Test func stopWithoutUWBLeavesRanging() throws {
        var h = H()
        h.ranging()
        #expect(h.phone([0x01, 0x06, 0x08, 0x00]) == [.sendToPhone([0x01, 0x07, 0x00, 0x00])])
        let session = try AndroidSessionConfiguration(Octets.uwbConfiguration, deviceAddress: [0xA1, 0xB2])
        #expect(h.machine.state == .ranging(session, version: .v1))
    }

    /// The phone's Stop Ranging Response (to a stop of the rig's) is taken silently.
    @Test func aStopRangingResponseFromThePhoneIsTaken() {
        var h = H()
        #expect(h.phone([0x01, 0x07, 0x01, 0x00]) == [])
    }

    /// Notifications for other sessions are not this phone's.
    @Test func otherSessionsAreIgnored() {
        var h = H()
        _ = h.phone(Octets.configurationV1)
        #expect(h.receive(.boardSessionActive(session: 0x0BAD)) == [])
        #expect(h.receive(.boardSessionStopped(session: 0x0BAD)) == [])
        #expect(h.receive(.boardSessionFailed(session: 0x0BAD, status: .failed)) == [])
        #expect(h.machine.boardSessionID == H.sessionID)
    }
}
