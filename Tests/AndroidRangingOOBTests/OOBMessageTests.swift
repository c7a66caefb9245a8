import Testing

@testable import AndroidRangingOOB

/// Parse and encode against `Octets`, written from the spec's layouts (its message table for the
/// ids; the PDL for the fields).
@Suite struct OOBMessageTests {
    @Test func bitmapMessagesHaveHeaderThenTechnologies() throws {
        let table: [(OOBMessage, [UInt8])] = [
            (OOBMessage(version: .v1, .capabilityRequest(.uwb)), [0x01, 0x00, 0x01, 0x00]),
            (OOBMessage(version: .v2, .capabilityRequest([.uwb, .bleRSSI])), [0x02, 0x00, 0x09, 0x00]),
            (OOBMessage(version: .v3, .capabilityRequest([.wifiPD])), [0x03, 0x00, 0x20, 0x00]),
            (OOBMessage(version: .v1, .configurationResponse(.uwb)), [0x01, 0x03, 0x01, 0x00]),
            (OOBMessage(version: .v1, .stopRanging(.uwb)), [0x01, 0x06, 0x01, 0x00]),
            (OOBMessage(version: .v2, .stopRangingResponse([.uwb, .bleChannelSounding])), [0x02, 0x07, 0x03, 0x00]),
            (OOBMessage(version: .v3, .motionNotification(.moderate)), [0x03, 0x08, 0x02]),
        ]
        for (message, octets) in table {
            #expect(message.encoded == octets)
            #expect(try OOBMessage(octets) == message)
        }
    }

    @Test func messageIDsAreTheSpecTable() {
        #expect(OOBMessageID.allCases.map(\.rawValue) == [0x0, 0x1, 0x2, 0x3, 0x6, 0x7, 0x8])
        #expect(RangingTechnology.allCases.map(\.rawValue) == [0x0, 0x1, 0x2, 0x3, 0x5])
    }

    @Test func capabilityResponseVersion1IsTwentyFourOctets() throws {
        #expect(Octets.capabilityResponseV1.count == 24)
        let message = try OOBMessage(Octets.capabilityResponseV1)
        #expect(message.version == .v1)
        guard case .capabilityResponse(let response) = message.payload, let uwb = response.uwb else {
            Issue.record("not a capability response with UWB: \(message)")
            return
        }
        #expect(response.supported == .uwb)
        #expect(uwb.address == [0xA1, 0xB2])
        #expect(uwb.channels == [5, 9])
        #expect(uwb.preambleIndexes == [9, 10, 11, 12])
        #expect(uwb.configIDs == [1])
        #expect(uwb.minimumIntervalMilliseconds == 120)
        #expect(uwb.minimumSlotDurationMilliseconds == 1)
        #expect(uwb.roles == [.initiator, .responder])
        #expect(message.encoded == Octets.capabilityResponseV1)
    }

    @Test func theBoardOffersWhatTheLiteralSays() {
        let response = CapabilityResponse(capabilities: [.uwb(Octets.board.capability(address: [0xA1, 0xB2]))])
        #expect(OOBMessage(version: .v1, .capabilityResponse(response)).encoded == Octets.capabilityResponseV1)
    }

    @Test func capabilityResponseVersion2AddsTransitioningAndDeviceType() throws {
        let message = try OOBMessage(Octets.capabilityResponseV2)
        guard case .capabilityResponse(let response) = message.payload else {
            Issue.record("not a capability response: \(message)")
            return
        }
        #expect(response.supported == [.uwb, .bleRSSI])
        #expect(response.capabilities.map(\.technology) == [.uwb, .bleRSSI])
        #expect(response.capabilities.last == .bleRSSI(address: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66]))
        #expect(response.transitioning == .makeBeforeBreak)
        #expect(response.deviceType == CapabilityResponse.deviceTypeTag)
        #expect(message.encoded == Octets.capabilityResponseV2)
        // The same response written as version 1 drops the three trailing octets.
        #expect(OOBMessage(version: .v1, message.payload).encoded == [0x01] + Octets.capabilityResponseV2[1..<32])
    }

    @Test func channelSoundingCapabilityIsNineOctets() throws {
        let octets: [UInt8] = [0x01, 0x01, 0x02, 0x00, 0x01, 0x09, 0x03, 0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5]
        let message = try OOBMessage(octets)
        #expect(message.payload == .capabilityResponse(CapabilityResponse(capabilities: [
            .bleChannelSounding(securityLevels: 0x03, address: [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5])
        ])))
        #expect(message.encoded == octets)
    }

    @Test func configurationVersion1FieldByField() throws {
        let message = try OOBMessage(Octets.configurationV1)
        guard case .configuration(let configuration) = message.payload else {
            Issue.record("not a configuration: \(message)")
            return
        }
        #expect(configuration.toConfigure == .uwb)
        #expect(configuration.toStart == .uwb)
        #expect(configuration.uwb == Octets.uwbConfiguration)
        #expect(configuration.motionSupported == false)
        #expect(message.encoded == Octets.configurationV1)
        #expect(OOBMessage(version: .v1, .configuration(RangingConfiguration(configurations: [.uwb(Octets.uwbConfiguration)]))).encoded
            == Octets.configurationV1)
    }

    @Test func configurationVersion3AddsMotionSupport() throws {
        let message = try OOBMessage(Octets.configurationV3)
        guard case .configuration(let configuration) = message.payload else {
            Issue.record("not a configuration: \(message)")
            return
        }
        #expect(configuration.motionSupported)
        #expect(configuration.uwb == Octets.uwbConfiguration)
        #expect(message.encoded == Octets.configurationV3)
    }

    @Test func provisionedKeysChangeTheBlockSize() throws {
        var uwb = Octets.uwbConfiguration
        uwb.sessionKey = Array(0..<32)
        let octets = OOBMessage(version: .v1, .configuration(RangingConfiguration(configurations: [.uwb(uwb)]))).encoded
        #expect(octets[6...7] == [0x00, 19 + 32])
        #expect(octets.count == 6 + 19 + 32)
        #expect(octets[20] == 32)
        #expect(Array(octets[21..<53]) == Array(0..<32))
        #expect(try OOBMessage(octets).payload == .configuration(RangingConfiguration(configurations: [.uwb(uwb)])))
    }

    @Test func configuredButNotStartedIsKept() throws {
        let octets: [UInt8] = [0x01, 0x02, 0x09, 0x00, 0x01, 0x00] + Octets.uwbConfigurationBlock + [0x03, 0x08, 1, 2, 3, 4, 5, 6]
        let message = try OOBMessage(octets)
        guard case .configuration(let configuration) = message.payload else {
            Issue.record("not a configuration: \(message)")
            return
        }
        #expect(configuration.toConfigure == [.uwb, .bleRSSI])
        #expect(configuration.toStart == .uwb)
        #expect(configuration.configurations.last == .bleRSSI(address: [1, 2, 3, 4, 5, 6]))
        #expect(message.encoded == octets)
    }
}
