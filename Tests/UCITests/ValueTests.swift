import Testing
import UCI

@Suite("Value types")
struct ValueTests {
    @Test func codeDescriptions() {
        #expect(StatusCode.rangingRxTimeout.description == "RX_TIMEOUT")
        #expect(StatusCode.ok.description == "OK")
        #expect(StatusCode(rawValue: 0x5A).description == "0x5A")
        #expect(ReasonCode.invalidRangingDuration.description == "ERROR_INVALID_RANGING_DURATION")
        #expect(ReasonCode(rawValue: 0x9C).description == "0x9C")
        #expect(AppConfigID.slotDuration.description == "SLOT_DURATION")
        #expect(AppConfigID(rawValue: 0xE8).description == "0xE8")
    }

    @Test func macAddressDescriptionIsWireOrder() {
        #expect(MacAddress.short(0xDD5F).description == "5F:DD")
        #expect(MacAddress.short(0x0001).description == "01:00")
        #expect(MacAddress.extended(0x1122_3344_5566_7788).description == "88:77:66:55:44:33:22:11")
    }

    @Test func typedConstructorsUseTableSizes() {
        #expect(AppConfigTLV.slotDuration(rstu: 2400).value == [0x60, 0x09])
        #expect(AppConfigTLV.rangingDuration(milliseconds: 200).value == [0xC8, 0, 0, 0])
        #expect(AppConfigTLV.uwbInitiationTime(milliseconds: 1000).value == [0xE8, 0x03, 0, 0])
        #expect(AppConfigTLV.deviceMacAddress(.extended(1)).value == [1, 0, 0, 0, 0, 0, 0, 0])
        #expect(AppConfigTLV.macAddressMode(.extended).value == [2])
        #expect(AppConfigTLV.dstMacAddresses([.short(0x0102), .short(0x0304)]).value == [2, 1, 4, 3])
    }

    @Test func typedReaders() {
        let tlv = AppConfigTLV(id: .dstMacAddress, value: [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(tlv.uint8 == nil && tlv.uint16 == nil && tlv.uint32 == nil)
        #expect(tlv.macAddresses(mode: .short) == [.short(0x0201), .short(0x0403), .short(0x0605), .short(0x0807)])
        #expect(tlv.macAddresses(mode: .extendedWithShortHeader) == [.extended(0x0807_0605_0403_0201)])
        #expect(AppConfigTLV(id: .dstMacAddress, value: [1, 2, 3]).macAddresses(mode: .short) == nil)
        #expect(AppConfigTLV(id: .stsIndex, value: [1, 0, 0, 0x80]).uint32 == 0x8000_0001)
    }

    @Test func q97Angles() {
        #expect(AngleMeasurement(rawQ9_7: Int16(bitPattern: 0xFF80), figureOfMerit: 0).degrees == -1.0)
        #expect(AngleMeasurement(degrees: -1.0, figureOfMerit: 0).rawQ9_7 == -128)
        #expect(AngleMeasurement(degrees: 0.004, figureOfMerit: 0).rawQ9_7 == 1)  // nearest 1/128
        #expect(AngleMeasurement(degrees: 1e9, figureOfMerit: 0).rawQ9_7 == Int16.max)
        #expect(AngleMeasurement(degrees: -.infinity, figureOfMerit: 0).rawQ9_7 == Int16.min)
        #expect(AngleMeasurement(degrees: .nan, figureOfMerit: 0).rawQ9_7 == 0)
        #expect(AngleMeasurement(rawQ9_7: Int16.min, figureOfMerit: 0).degrees == -256.0)
    }

    @Test func lineOfSightCodes() throws {
        let header = "00 00 00 00 2a 00 00 00 00 78 00 00 00 01 00 00 00 00 00 00 00 00 00 00 01 "
        let record = { (nlos: String) in "5f dd 00 \(nlos) " + String(repeating: "00 ", count: 27) }
        for (octet, expected) in [("00", LineOfSight.lineOfSight), ("01", .nonLineOfSight), ("ff", .unknown(0xFF))] {
            let message = UCIMessage(messageType: .notification, groupID: 2, opcodeID: 0, payload: bytes(header + record(octet)))
            guard case let .rangeData(data) = try UCINotification(message) else {
                Issue.record("not range data")
                continue
            }
            #expect(data.measurements.first?.lineOfSight == expected)
        }
    }
}
