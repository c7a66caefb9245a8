import Testing

@testable import AndroidRangingOOB

/// The Jetpack layout read from octets written by hand (`JetpackOctets`), every layout refusal,
/// and Jetpack's constants against the sources they were verified in.
@Suite struct JetpackParametersTests {
    @Test func parametersReadFromTheTable() throws {
        #expect(JetpackOctets.controllerParameters.count == 28)
        #expect(try JetpackRequest(JetpackOctets.controllerParameters) == .parameters(JetpackOctets.controller))
        guard case .parameters(let controlee) = try JetpackRequest(JetpackOctets.controleeParameters) else {
            Issue.record("not parameters")
            return
        }
        #expect(controlee.role == .controlee && controlee.updateRate == .frequent && controlee.slotDurationMilliseconds == 1)
        #expect(controlee.channel == 0 && controlee.preambleIndex == 0 && controlee.leavesComplexChannelToRig)
        #expect(try JetpackRequest(JetpackOctets.stop) == .stop)
    }

    @Test func everyMessageReEncodesToItsOctets() throws {
        #expect(JetpackRequest.parameters(JetpackOctets.controller).encoded == JetpackOctets.controllerParameters)
        #expect(try JetpackRequest(JetpackOctets.controleeParameters).encoded == JetpackOctets.controleeParameters)
        #expect(JetpackRequest.stop.encoded == JetpackOctets.stop)
        let answers: [(JetpackAnswer, [UInt8])] = [
            (.accepted(rigAddress: [0xA1, 0xB2], rigRole: .controlee, channel: 9, preambleIndex: 10), JetpackOctets.acceptedAsControlee),
            (.accepted(rigAddress: [0xA1, 0xB2], rigRole: .controller, channel: 9, preambleIndex: 9), JetpackOctets.acceptedAsController),
            (.stopped(.requested), JetpackOctets.stopped(0x00)),
            (.refused(.busy), JetpackOctets.refused(0x0B)),
        ]
        for (answer, octets) in answers {
            #expect(answer.encoded == octets)
            #expect(try JetpackAnswer(octets) == answer)
        }
    }

    /// Jetpack's constants as androidx's `core/uwb/uwb/api/current.txt` gives them, mapped to the
    /// intervals AOSP's Jetpack backend runs for config id 1 (`Utils.java`: NORMAL = 1 → 240 ms,
    /// INFREQUENT = 2 → 600 ms, FAST = 3 → 120 ms).
    @Test func updateRatesMapToAndroidsIntervals() {
        #expect(JetpackUpdateRate.automatic.rawValue == 1)  // RANGING_UPDATE_RATE_AUTOMATIC
        #expect(JetpackUpdateRate.infrequent.rawValue == 2)  // RANGING_UPDATE_RATE_INFREQUENT
        #expect(JetpackUpdateRate.frequent.rawValue == 3)  // RANGING_UPDATE_RATE_FREQUENT
        #expect(JetpackUpdateRate.automatic.intervalMilliseconds(configID: 1) == 240)
        #expect(JetpackUpdateRate.infrequent.intervalMilliseconds(configID: 1) == 600)
        #expect(JetpackUpdateRate.frequent.intervalMilliseconds(configID: 1) == 120)
        #expect(JetpackUpdateRate.automatic.intervalMilliseconds(configID: 7) == nil)
        // CONFIG_UNICAST_DS_TWR is 1 in Jetpack and in the board's config ids alike.
        #expect(AndroidBoardCapabilities.unicastDSTWR == 1)
        // Jetpack's controller is the initiator for config id 1.
        #expect(JetpackRole.controller.rangingRole == .initiator && JetpackRole.controlee.rangingRole == .responder)
    }

    @Test func theConfigurationIsTheComplementOfThePhones() throws {
        let uwb = try JetpackOctets.controller.configuration(for: Octets.board)
        #expect(uwb.mode == .controlee && uwb.role == .responder)
        #expect(uwb.intervalMilliseconds == 240 && uwb.channel == 9 && uwb.preambleIndex == 10 && uwb.address == [0xC4, 0xD3])
        guard case .parameters(let controlee) = try JetpackRequest(JetpackOctets.controleeParameters) else { return }
        let rig = try controlee.configuration(for: Octets.board)
        #expect(rig.mode == .controller && rig.role == .initiator && rig.intervalMilliseconds == 120)
        // The rig's choice: channel 9, then the preamble the session id picks (0x12345678 mod 4 = 0 → 9).
        #expect(rig.channel == 9 && rig.preambleIndex == 9)
        var other = controlee
        other.sessionID = 0x1234_5679
        #expect(other.complexChannel(on: Octets.board) == (9, 10))
        // A board without channel 9 gets its first.
        let board5 = AndroidBoardCapabilities(channels: [5], minimumIntervalMilliseconds: 120, minimumSlotDurationMilliseconds: 1)
        #expect(controlee.complexChannel(on: board5) == (5, 9))
        // A controller phone's complex channel is its own, even 0 and 0 (which the board refuses).
        var zero = JetpackOctets.controller
        zero.channel = 0
        zero.preambleIndex = 0
        #expect(zero.complexChannel(on: Octets.board) == (0, 0))
    }

    /// Every prefix of every message is truncated, and says which field is missing.
    @Test func everyTruncationIsRefused() {
        for message in JetpackOctets.all {
            for length in 0..<message.count {
                let prefix = Array(message.prefix(length))
                #expect(throws: JetpackMessageError.self) { try JetpackRequest(prefix) }
                #expect(throws: JetpackMessageError.self) { try JetpackAnswer(prefix) }
            }
        }
        #expect(throws: JetpackMessageError.truncated(context: "Jetpack message", field: "magic", needed: 1, available: 0)) {
            try JetpackRequest([])
        }
        #expect(
            throws: JetpackMessageError.truncated(context: "Jetpack parameters", field: "session key", needed: 8, available: 7)
        ) { try JetpackRequest(JetpackOctets.controllerParameters.dropLast()) }
        #expect(throws: JetpackMessageError.truncated(context: "Jetpack parameters", field: "sub-session id", needed: 4, available: 3)) {
            try JetpackRequest(JetpackOctets.controllerParameters.prefix(12))
        }
    }

    @Test func layoutRefusals() {
        #expect(throws: JetpackMessageError.trailingOctets(kind: "parameters", count: 1)) {
            try JetpackRequest(JetpackOctets.controllerParameters + [0x00])
        }
        #expect(throws: JetpackMessageError.trailingOctets(kind: "stop", count: 2)) { try JetpackRequest(JetpackOctets.stop + [0x00, 0x00]) }
        #expect(throws: JetpackMessageError.notJetpack(0x01)) { try JetpackRequest([0x01, 0x00, 0x01, 0x00]) }
        #expect(throws: JetpackMessageError.unsupportedVersion(2)) { try JetpackRequest(JetpackOctets.controller(1, 0x02)) }
        #expect(throws: JetpackMessageError.unknownKind(0x03)) { try JetpackRequest([0x4A, 0x01, 0x03]) }
        // The rig's own answers are not something a phone writes.
        #expect(throws: JetpackMessageError.unknownKind(0x81)) { try JetpackRequest(JetpackOctets.acceptedAsControlee) }
        #expect(throws: JetpackMessageError.unknownKind(0x01)) { try JetpackAnswer(JetpackOctets.controllerParameters) }
        #expect(throws: JetpackMessageError.invalidValue(field: "update rate", value: 0)) { try JetpackRequest(JetpackOctets.controller(16, 0)) }
        #expect(throws: JetpackMessageError.invalidValue(field: "update rate", value: 4)) { try JetpackRequest(JetpackOctets.controller(16, 4)) }
        #expect(throws: JetpackMessageError.invalidValue(field: "role", value: 2)) { try JetpackRequest(JetpackOctets.controller(18, 2)) }
        // A key length that leaves octets over, or runs past the end.
        #expect(throws: JetpackMessageError.trailingOctets(kind: "parameters", count: 1)) { try JetpackRequest(JetpackOctets.controller(19, 7)) }
        #expect(throws: JetpackMessageError.self) { try JetpackRequest(JetpackOctets.controller(19, 9)) }
        #expect(throws: JetpackMessageError.invalidValue(field: "role", value: 7)) { try JetpackAnswer([0x4A, 0x01, 0x81, 0xA1, 0xB2, 0x07, 0x09, 0x0A]) }
        #expect(throws: JetpackMessageError.invalidValue(field: "reason", value: 0x42)) { try JetpackAnswer(JetpackOctets.refused(0x42)) }
        #expect(throws: JetpackMessageError.trailingOctets(kind: "answer", count: 1)) { try JetpackAnswer(JetpackOctets.stopped(0) + [0]) }
    }

    /// Any single-octet change of a seed gives a message that re-encodes to itself, or an error.
    @Test func mutationsAnswerWithAValueOrAnError() {
        for message in JetpackOctets.all {
            for offset in message.indices {
                for octet: UInt8 in [0x00, 0x01, 0x02, 0x03, 0x4A, 0x7F, 0x81, 0xFF] {
                    var mutated = message
                    mutated[offset] = octet
                    if let request = try? JetpackRequest(mutated) { #expect(request.encoded == mutated) }
                    if let answer = try? JetpackAnswer(mutated) { #expect(answer.encoded == mutated) }
                }
            }
        }
    }

    @Test func descriptionsNameTheField() {
        #expect(JetpackMessageError.notJetpack(0x01).description == "The first octet 0x01 is not the Jetpack magic 0x4A.")
        #expect(JetpackMessageError.invalidValue(field: "role", value: 2).description == "The role octet 2 is not one of its defined values.")
        #expect(
            AndroidOOBResponderReason.refusedJetpackParameters(.subSessionID(7)).description
                == "Refused a phone's Jetpack parameters, no board command sent: Sub-session id 7 is not 0; this rig runs no provisioned sub-sessions.")
    }
}
