import Testing
import UCI

@testable import AndroidRangingOOB

/// Every refusal of a Jetpack write: one typed log line, a "refused" answer (`4A 01 83` and the
/// reason code, written by hand from `JetpackReasonCode`'s table), no board command and no change
/// of state.
@Suite struct JetpackParametersRefusalTests {
    typealias H = JetpackResponderHarness

    /// `octets` refused with `reason` and answered with `code` in whatever state `h` is in.
    static func expectRefused(_ h: inout H, _ octets: [UInt8], _ reason: AndroidOOBResponderReason, code: UInt8) {
        let before = h.machine.state
        #expect(h.phone(octets) == [.log(reason), .sendToPhone(JetpackOctets.refused(code))])
        #expect(h.machine.state == before)
    }

    static func expectBoardRefused(_ h: inout H, _ octets: [UInt8], _ error: RangingConfigurationError, code: UInt8) {
        expectRefused(&h, octets, .refusedJetpackParameters(.configuration(error)), code: code)
    }

    @Test func malformedWrites() {
        var h = H()
        Self.expectRefused(&h, [], .malformedJetpackMessage(.truncated(context: "Jetpack message", field: "magic", needed: 1, available: 0)), code: 0x01)
        // An OOB Capability Request on the wrong characteristic.
        Self.expectRefused(&h, [0x01, 0x00, 0x01, 0x00], .malformedJetpackMessage(.notJetpack(0x01)), code: 0x01)
        Self.expectRefused(&h, [0x4A, 0x02, 0x01], .malformedJetpackMessage(.unsupportedVersion(2)), code: 0x01)
        Self.expectRefused(&h, [0x4A, 0x01, 0x07], .malformedJetpackMessage(.unknownKind(0x07)), code: 0x01)
        Self.expectRefused(&h, JetpackOctets.acceptedAsControlee, .malformedJetpackMessage(.unknownKind(0x81)), code: 0x01)
        Self.expectRefused(
            &h, JetpackOctets.controllerParameters + [0x00], .malformedJetpackMessage(.trailingOctets(kind: "parameters", count: 1)),
            code: 0x01)
        Self.expectRefused(
            &h, Array(JetpackOctets.controllerParameters.prefix(20)),
            .malformedJetpackMessage(.truncated(context: "Jetpack parameters", field: "session key", needed: 8, available: 0)), code: 0x01)
        Self.expectRefused(
            &h, JetpackOctets.controller(16, 0x04), .malformedJetpackMessage(.invalidValue(field: "update rate", value: 4)), code: 0x01)
        Self.expectRefused(&h, JetpackOctets.controller(18, 0x02), .malformedJetpackMessage(.invalidValue(field: "role", value: 2)), code: 0x01)
        #expect(h.machine.state == .idle)
    }

    /// Each field the board checks, one at a time, with the code the app sees.
    @Test func whatTheBoardCannotRun() {
        var h = H()
        Self.expectBoardRefused(&h, JetpackOctets.controller(13, 2), .unsupportedConfigID(2, supported: [1]), code: 0x02)
        // Config type 7 (provisioned individual multicast) has no Android presets at all.
        Self.expectBoardRefused(&h, JetpackOctets.controller(13, 7), .unsupportedConfigID(7, supported: [1]), code: 0x02)
        // Type 3 is an AoA-less static one in Jetpack's numbering, a provisioned one in the OOB
        // spec's: refused even by a board that offers OOB phones id 3.
        var provisioned = Octets.board
        provisioned.configIDs = [1, 3]
        provisioned.sessionKeyLengths = [8, 16]
        var onProvisioned = H(machine: JetpackResponder(settings: AndroidOOBResponderSettings(board: provisioned, shortAddress: [0xA1, 0xB2])))
        Self.expectBoardRefused(&onProvisioned, JetpackOctets.controller(13, 3), .unsupportedConfigID(3, supported: [1]), code: 0x02)
        Self.expectBoardRefused(&h, JetpackOctets.controller(14, 6), .unsupportedChannel(6, supported: [5, 9]), code: 0x03)
        Self.expectBoardRefused(&h, JetpackOctets.controller(15, 25), .unsupportedPreambleIndex(25, supported: [9, 10, 11, 12]), code: 0x04)
        var zeroSession = JetpackOctets.controllerParameters
        zeroSession.replaceSubrange(5..<9, with: [0, 0, 0, 0])
        Self.expectBoardRefused(&h, zeroSession, .reservedSessionID, code: 0x05)
        Self.expectBoardRefused(&h, JetpackOctets.controller(17, 3), .unsupportedSlotDuration(3, supported: [1, 2]), code: 0x09)
        Self.expectBoardRefused(&h, JetpackOctets.controller(17, 0), .slotBelowMinimum(0, minimum: 1), code: 0x09)
        // A provisioned-STS key (16 octets): the layout takes it, the board does not.
        let long = Array(JetpackOctets.controllerParameters.prefix(19)) + [0x10] + Array(repeating: 0x5A, count: 16)
        Self.expectBoardRefused(&h, long, .sessionKeyLength(16, supported: [8]), code: 0x07)
        Self.expectBoardRefused(&h, Array(JetpackOctets.controllerParameters.prefix(19)) + [0x00], .sessionKeyLength(0, supported: [8]), code: 0x07)
        // A controlee phone naming half a complex channel: channel 0 is no channel.
        var half = JetpackOctets.controleeParameters
        half[15] = 0x0A
        Self.expectBoardRefused(&h, half, .unsupportedChannel(0, supported: [5, 9]), code: 0x03)
    }

    @Test func aSubSessionIsRefused() {
        var h = H()
        Self.expectRefused(&h, JetpackOctets.controller(9, 1), .refusedJetpackParameters(.subSessionID(1)), code: 0x06)
        Self.expectRefused(&h, JetpackOctets.controller(12, 0x80), .refusedJetpackParameters(.subSessionID(0x8000_0000)), code: 0x06)
    }

    /// A board whose minimum interval is 240 ms cannot run "frequent" (120 ms); one that can only
    /// be the initiator cannot be a controller phone's controlee.
    @Test func theBoardsLimits() {
        var slow = H()
        slow.machine = JetpackResponder(
            settings: AndroidOOBResponderSettings(
                board: AndroidBoardCapabilities(channels: [9], minimumIntervalMilliseconds: 240, minimumSlotDurationMilliseconds: 1),
                shortAddress: [0xA1, 0xB2]))
        Self.expectBoardRefused(&slow, JetpackOctets.controller(16, 3), .intervalBelowMinimum(120, minimum: 240), code: 0x08)
        #expect(slow.phone(JetpackOctets.controller(16, 2)).contains(.sendToPhone(JetpackOctets.acceptedAsControlee)))  // 600 ms

        var initiatorOnly = H()
        initiatorOnly.machine = JetpackResponder(
            settings: AndroidOOBResponderSettings(
                board: AndroidBoardCapabilities(channels: [9], minimumIntervalMilliseconds: 120, minimumSlotDurationMilliseconds: 1, roles: .initiator),
                shortAddress: [0xA1, 0xB2]))
        Self.expectBoardRefused(&initiatorOnly, JetpackOctets.controllerParameters, .unsupportedRole(.responder), code: 0x0A)
        #expect(initiatorOnly.phone(JetpackOctets.controleeParameters).contains(.sendToPhone(JetpackOctets.acceptedAsController)))
    }

    /// Parameters while a session starts, ranges or stops: refused as busy, the running one kept.
    @Test func parametersAreRefusedInEveryBusyState() {
        var h = H()
        _ = h.phone(JetpackOctets.controllerParameters)
        Self.expectRefused(&h, JetpackOctets.controleeParameters, .jetpackParametersWhileBusy(session: H.sessionID), code: 0x0B)
        _ = h.receive(.boardSessionActive(session: H.sessionID))
        Self.expectRefused(&h, JetpackOctets.controllerParameters, .jetpackParametersWhileBusy(session: H.sessionID), code: 0x0B)
        _ = h.phone(JetpackOctets.stop)
        Self.expectRefused(&h, JetpackOctets.controllerParameters, .jetpackParametersWhileBusy(session: H.sessionID), code: 0x0B)
        // Once the board has deinitialised it, the same parameters start again.
        _ = h.receive(.boardSessionStopped(session: H.sessionID))
        #expect(h.phone(JetpackOctets.controllerParameters).count == 2)
    }

    /// A refusal while ranging leaves the session alone.
    @Test func aMalformedWriteWhileRangingChangesNothing() throws {
        var h = H()
        h.ranging()
        Self.expectRefused(&h, [0x4A], .malformedJetpackMessage(.truncated(context: "Jetpack message", field: "version", needed: 1, available: 0)), code: 0x01)
        #expect(h.machine.boardSessionID == H.sessionID)
    }
}
