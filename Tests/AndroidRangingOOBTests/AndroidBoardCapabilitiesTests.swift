import Testing
import UCI

@testable import AndroidRangingOOB

/// The board accepts exactly what it offers: each field of a phone's UWB configuration outside
/// the offer is refused with its own reason.
@Suite struct AndroidBoardCapabilitiesTests {
    let board = Octets.board

    @Test func theLiteralConfigurationPasses() throws {
        let message = try OOBMessage(Octets.configurationV1)
        guard case .configuration(let configuration) = message.payload else {
            Issue.record("not a configuration: \(message)")
            return
        }
        #expect(try board.validate(configuration) == Octets.uwbConfiguration)
    }

    @Test func everyFieldOutsideTheOfferIsRefused() {
        func refused(_ change: (inout UWBConfiguration) -> Void, on board: AndroidBoardCapabilities? = nil) -> RangingConfigurationError? {
            var configuration = Octets.uwbConfiguration
            change(&configuration)
            do {
                try (board ?? self.board).validate(configuration)
                return nil
            } catch {
                return error
            }
        }
        #expect(refused { $0.sessionID = 0 } == .reservedSessionID)
        #expect(refused { $0.configID = 3 } == .unsupportedConfigID(3, supported: [1]))
        #expect(refused { $0.channel = 6 } == .unsupportedChannel(6, supported: [5, 9]))
        #expect(refused { $0.preambleIndex = 25 } == .unsupportedPreambleIndex(25, supported: [9, 10, 11, 12]))
        #expect(refused { $0.intervalMilliseconds = 119 } == .intervalBelowMinimum(119, minimum: 120))
        #expect(refused { $0.intervalMilliseconds = 120 } == nil)
        #expect(refused { $0.slotDurationMilliseconds = 0 } == .slotBelowMinimum(0, minimum: 1))
        #expect(refused { $0.slotDurationMilliseconds = 3 } == .unsupportedSlotDuration(3, supported: [1, 2]))
        #expect(refused { $0.slotDurationMilliseconds = 1 } == nil)
        #expect(refused { $0.sessionKey = Array(repeating: 0, count: 16) } == .sessionKeyLength(16, supported: [8]))
        // A board with provisioned STS runs id 3 with a 16-octet key; each id takes its own length.
        var provisioned = board
        provisioned.configIDs = [1, 3]
        provisioned.sessionKeyLengths = [8, 16]
        let provisionedKey = { (configuration: inout UWBConfiguration) in
            configuration.configID = 3
            configuration.sessionKey = Array(repeating: 0, count: 16)
        }
        #expect(refused(provisionedKey, on: provisioned) == nil)
        #expect(refused({ $0.configID = 3 }, on: provisioned) == .sessionKeyLength(8, supported: [16]))
        #expect(refused({ $0.sessionKey = Array(repeating: 0, count: 16) }, on: provisioned) == .sessionKeyLength(16, supported: [8]))
        #expect(refused({ provisionedKey(&$0); $0.sessionKey += $0.sessionKey }, on: provisioned) == .sessionKeyLength(32, supported: [16]))
        var responderOnly = board
        responderOnly.roles = .responder
        #expect(refused({ $0.role = .initiator }, on: responderOnly) == .unsupportedRole(.initiator))
        #expect(refused({ $0.role = .responder }, on: responderOnly) == nil)
    }

    @Test func aConfigurationWithoutUWBIsRefused() {
        let configuration = RangingConfiguration(configurations: [.bleRSSI(address: [1, 2, 3, 4, 5, 6])])
        #expect(throws: RangingConfigurationError.noUWBConfiguration) { try board.validate(configuration) }
    }

    /// Whatever the board offers, a configuration built from the offer passes and one a step
    /// outside it does not (so offer and check cannot drift apart).
    @Test func offerAndCheckAgree() throws {
        let capability = board.capability(address: [0xA1, 0xB2])
        for configID in capability.configIDs {
            for channel in capability.channels {
                for preamble in capability.preambleIndexes {
                    var configuration = Octets.uwbConfiguration
                    configuration.configID = configID
                    configuration.channel = channel
                    configuration.preambleIndex = preamble
                    configuration.intervalMilliseconds = capability.minimumIntervalMilliseconds
                    configuration.slotDurationMilliseconds = capability.minimumSlotDurationMilliseconds
                    try board.validate(configuration)
                }
            }
        }
        for channel: UInt8 in 0...31 where !capability.channels.contains(channel) {
            var configuration = Octets.uwbConfiguration
            configuration.channel = channel
            #expect(throws: RangingConfigurationError.unsupportedChannel(channel, supported: [5, 9])) { try board.validate(configuration) }
        }
    }

    /// SUPPORTED_CHANNELS is TLV 0x0E on a UCI 2.0 board (bits: 5, 6, 8, 9, 10, 12, 13, 14).
    @Test func readFromTheBoardsCapabilities() {
        let channels5689 = AndroidBoardCapabilities(capabilities: [CapabilityTLV(type: 0x0E, value: [0x0F])], uciMajor: 2)
        #expect(channels5689 == Octets.board)
        let only9 = AndroidBoardCapabilities(capabilities: [CapabilityTLV(type: 0x0E, value: [0x08])], uciMajor: 2)
        #expect(only9.channels == [9])
        // A board with neither 5 nor 9 offers no channel, so every configuration is refused.
        let channel6 = AndroidBoardCapabilities(capabilities: [CapabilityTLV(type: 0x0E, value: [0x02])], uciMajor: 2)
        #expect(channel6.channels == [])
        #expect(AndroidBoardCapabilities(capabilities: [], uciMajor: 2).channels == [9])
    }

    @Test func errorsReadAsOneSentenceNamingTheValue() {
        let errors: [(RangingConfigurationError, String)] = [
            (.noUWBConfiguration, "no UWB"),
            (.reservedSessionID, "Session id 0"),
            (.unsupportedConfigID(3, supported: [1]), "Config id 3"),
            (.unsupportedChannel(6, supported: [5, 9]), "(5, 9)"),
            (.unsupportedPreambleIndex(25, supported: [9]), "index 25"),
            (.intervalBelowMinimum(60, minimum: 120), "60 ms"),
            (.slotBelowMinimum(0, minimum: 1), "0 ms"),
            (.unsupportedSlotDuration(3, supported: [1, 2]), "3 ms"),
            (.sessionKeyLength(16, supported: [8]), "16 octets"),
            (.unsupportedRole(.initiator), "initiator"),
        ]
        for (error, named) in errors {
            #expect(error.description.contains(named), "\(error.description)")
            #expect(error.description.hasSuffix("."))
        }
        #expect(Set(errors.map(\.0.description)).count == errors.count)
    }
}
