import Testing

@testable import GATTServer

/// The Android OOB service: its layout in the database, written out by hand, and its framing
/// (one message per write or notification, an MTU exchange first).
@Suite struct AndroidOOBGATTServiceTests {
    // The UUIDs as PDUs carry them: the text form's octets reversed, by hand.
    static let serviceLE = octets("13 EE 8A 8D EA 27 00 BA BC 44 17 A2 15 49 19 06")
    static let phoneToRigLE = octets("03 BB 0F CA 9B 58 AC 85 E3 49 2E F0 D4 0B 0B 9D")
    static let rigToPhoneLE = octets("C4 94 40 38 6F 11 4D BA AF 4B EC 39 38 52 56 2E")
    static let jetpackLE = octets("B8 F8 A2 66 6C 5B B0 89 8D 4B A4 DA 3A A8 35 56")

    /// The version 1 Capability Response with UWB from the spec's layout: 24 octets.
    static let capabilityResponse = octets("01 01 01 00 00 14 A1 B2 20 02 00 00 00 0F 00 00 02 00 00 00 78 00 01 03")

    @Test func theServiceIsLaidOutAlone() {
        let database = GATTDatabase([AndroidOOBGATTService.service])
        let expected: [(UInt16, [UInt8], [UInt8])] = [
            (0x0001, octets("00 28"), Self.serviceLE),
            // Phone → rig: write (0x08) only, value handle 3.
            (0x0002, octets("03 28"), octets("08 03 00") + Self.phoneToRigLE),
            (0x0003, Self.phoneToRigLE, []),
            // Rig → phone: notify (0x10), value handle 5, then its 0x2902.
            (0x0004, octets("03 28"), octets("10 05 00") + Self.rigToPhoneLE),
            (0x0005, Self.rigToPhoneLE, []),
            (0x0006, octets("02 29"), octets("00 00")),
            // Jetpack: write (0x08) and notify (0x10), value handle 8, then its 0x2902.
            (0x0007, octets("03 28"), octets("18 08 00") + Self.jetpackLE),
            (0x0008, Self.jetpackLE, []),
            (0x0009, octets("02 29"), octets("00 00")),
        ]
        #expect(database.attributes.count == expected.count)
        for (attribute, (handle, type, value)) in zip(database.attributes, expected) {
            #expect(attribute.handle == handle)
            #expect(attribute.type.littleEndian == type, "type of handle \(handle)")
            #expect(attribute.value == value, "value of handle \(handle)")
        }
        #expect(AndroidOOBGATTService.service.characteristics.map { $0.properties.bluezFlags() } == [["write"], ["notify"], ["write", "notify"]])
    }

    /// Beside the accessory services, it takes the handles after theirs.
    @Test func theServiceFollowsTheAccessoryServices() {
        let database = GATTDatabase(accessoryDatabase.services.map(\.definition) + [AndroidOOBGATTService.service])
        #expect(database.services.last.map { [$0.startHandle, $0.endHandle] } == [18, 26])
        let notify = database.characteristic(AndroidOOBGATTService.rigToPhone)
        #expect(notify?.valueHandle == 22 && notify?.configurationHandle == 23)
        let jetpack = database.characteristic(AndroidOOBGATTService.jetpack)
        #expect(jetpack?.declarationHandle == 24 && jetpack?.valueHandle == 25 && jetpack?.configurationHandle == 26)
    }

    /// 24 octets do not fit the default ATT_MTU's 20; the refusal says what the phone must do.
    @Test func aMessageAboveTheMTUIsRefused() throws {
        #expect(Self.capabilityResponse.count == 24)
        #expect(throws: AndroidOOBFramingError.exceedsMTU(length: 24, attMTU: 23)) {
            try AndroidOOBGATTService.notification(Self.capabilityResponse, attMTU: 23)
        }
        #expect(try AndroidOOBGATTService.notification(Self.capabilityResponse, attMTU: 27) == Self.capabilityResponse)
        #expect(
            AndroidOOBFramingError.exceedsMTU(length: 24, attMTU: 23).description
                == "A 24-octet OOB message exceeds the 20 octets of one notification at ATT_MTU 23; "
                + "the phone app must request an ATT_MTU of at least 30 first.")
        // The longest message the rig sends, a version 2 Capability Response with UWB (27), fits the minimum.
        let version2 = [0x02] + Self.capabilityResponse.dropFirst() + [0x00, 0x03, 0x00]
        #expect(try AndroidOOBGATTService.notification(version2, attMTU: AndroidOOBGATTService.minimumATTMTU) == version2)
        #expect(throws: AndroidOOBFramingError.self) {
            try AndroidOOBGATTService.notification(version2, attMTU: AndroidOOBGATTService.minimumATTMTU - 1)
        }
    }

    /// Over ATT: after the phone's MTU exchange and subscription, a Configuration arrives as one
    /// Write Request and the Capability Response leaves as one notification.
    @Test func oneMessagePerWriteAndNotificationAfterAnMTUExchange() throws {
        var server = ATTServer(database: GATTDatabase([AndroidOOBGATTService.service]))
        #expect(throws: ATTNotificationError.self) {
            try server.notification(AndroidOOBGATTService.rigToPhone, value: Self.capabilityResponse)
        }
        _ = server.handle(octets("02 05 02"))  // Exchange MTU Request, client MTU 517
        _ = server.handle(octets("12 06 00 01 00"))  // subscribe: 0x0001 to the 0x2902 at handle 6
        let pdu = try server.notification(AndroidOOBGATTService.rigToPhone, value: Self.capabilityResponse)
        #expect(pdu == octets("1B 05 00") + Self.capabilityResponse)

        // A version 1 Configuration with an 8-octet key: 33 octets, in one Write Request to handle 3.
        let configuration = octets("01 02 01 00 01 00 00 1B C4 D3 78 56 34 12 01 09 0A F0 00 02 08 08 07 01 02 03 04 05 06 55 53 02 02")
        #expect(configuration.count == 33)
        let actions = server.handle(octets("12 03 00") + configuration)
        #expect(sent(actions) == [octets("13")])
        #expect(actions.contains(.write(characteristic: AndroidOOBGATTService.phoneToRig, valueHandle: 3, value: configuration, withResponse: true)))
    }

    /// The Jetpack characteristic takes the phone's parameters as one Write Request (28 octets:
    /// `4A 01 01`, address, session id, sub-session id, config type, channel, preamble, update
    /// rate, slot, role, key length, key) and carries the rig's answer back as a notification on
    /// itself; the 8-octet answer fits even the default ATT_MTU.
    @Test func jetpackParametersInOneWriteAndTheAnswerAsANotification() throws {
        var server = ATTServer(database: GATTDatabase([AndroidOOBGATTService.service]))
        _ = server.handle(octets("12 09 00 01 00"))  // subscribe: 0x0001 to the 0x2902 at handle 9
        let accepted = octets("4A 01 81 A1 B2 00 09 0A")
        #expect(try server.notification(AndroidOOBGATTService.jetpack, value: accepted) == octets("1B 08 00") + accepted)

        _ = server.handle(octets("02 05 02"))  // Exchange MTU Request, client MTU 517
        let parameters = octets("4A 01 01 C4 D3 78 56 34 12 00 00 00 00 01 09 0A 01 02 01 08 08 07 01 02 03 04 05 06")
        #expect(parameters.count == 28)
        let actions = server.handle(octets("12 08 00") + parameters)
        #expect(sent(actions) == [octets("13")])
        #expect(actions.contains(.write(characteristic: AndroidOOBGATTService.jetpack, valueHandle: 8, value: parameters, withResponse: true)))
    }
}
