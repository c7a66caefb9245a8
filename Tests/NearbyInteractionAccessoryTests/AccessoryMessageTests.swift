import Testing

@testable import NearbyInteractionAccessory

/// The message ids, written from Apple's accessory sample app ("Implementing spatial interactions
/// with third-party accessories", `MessageId`: 0x1-0x3 from the accessory, 0xA-0xC to it), which
/// the nRF firmware `brian-level/nrfuwb` (components/uwb/uwb_defs.h) repeats.
@Suite struct AccessoryMessageTests {
    @Test func everyMessageHasItsIDOctet() throws {
        let blob: [UInt8] = [0xAA, 0xBB]
        let table: [(AccessoryMessage, [UInt8])] = [
            (.accessoryConfigurationData(blob), [0x01, 0xAA, 0xBB]),
            (.uwbDidStart, [0x02]),
            (.uwbDidStop, [0x03]),
            (.initialize, [0x0A]),
            (.configureAndStart(shareableConfiguration: blob), [0x0B, 0xAA, 0xBB]),
            (.stop, [0x0C]),
        ]
        for (message, octets) in table {
            #expect(message.encoded == octets)
            #expect(try AccessoryMessage(octets) == message)
        }
        #expect(Set(table.map(\.0.id)).count == AccessoryMessageID.allCases.count)
    }

    @Test func directionFollowsTheID() {
        #expect(AccessoryMessageID.allCases.filter(\.isFromPhone) == [.initialize, .configureAndStart, .stop])
    }

    @Test func malformedMessagesGetTheirOwnErrors() {
        #expect(throws: AccessoryMessageError.empty) { try AccessoryMessage([]) }
        #expect(throws: AccessoryMessageError.unknownID(0x04)) { try AccessoryMessage([0x04]) }
        #expect(throws: AccessoryMessageError.unknownID(0xA5)) { try AccessoryMessage([0xA5, 0x00]) }
        #expect(throws: AccessoryMessageError.unexpectedPayload(.initialize, size: 1)) { try AccessoryMessage([0x0A, 0x00]) }
        #expect(throws: AccessoryMessageError.unexpectedPayload(.uwbDidStop, size: 2)) { try AccessoryMessage([0x03, 1, 2]) }
        #expect(throws: AccessoryMessageError.missingPayload(.configureAndStart)) { try AccessoryMessage([0x0B]) }
        #expect(throws: AccessoryMessageError.missingPayload(.accessoryConfigurationData)) { try AccessoryMessage([0x01]) }
        let huge = [0x0B] + [UInt8](repeating: 0, count: 272)
        #expect(throws: AccessoryMessageError.payloadTooLarge(.configureAndStart, size: 272, limit: 271)) {
            try AccessoryMessage(huge)
        }
    }

    @Test func errorsReadAsOneSentenceNamingTheValue() {
        let errors: [(AccessoryMessageError, String)] = [
            (.empty, "no message id"),
            (.unknownID(0x04), "0x4"),
            (.unexpectedPayload(.stop, size: 3), "stop (0x0C)"),
            (.missingPayload(.configureAndStart), "configure and start (0x0B)"),
            (.payloadTooLarge(.configureAndStart, size: 300, limit: 271), "300"),
        ]
        for (error, named) in errors {
            #expect(error.description.contains(named), "\(error.description)")
            #expect(error.description.hasSuffix("."))
        }
        #expect(Set(errors.map(\.0.description)).count == errors.count)
    }
}
