import ByteCoding
import Testing

@Suite struct LittleEndianTests {
    struct Short: TruncationError, Equatable {
        var context: String, field: String, needed: Int, available: Int
        static func truncated(context: String, field: String, needed: Int, available: Int) -> Short {
            Short(context: context, field: field, needed: needed, available: available)
        }
    }

    @Test func readsLittleEndianFieldsInOrder() throws {
        // A SESSION_STATUS_NTF payload (FiRa UCI: token 0x00000001 LE, state 2 = ACTIVE, reason 0).
        var reader = LittleEndianReader<Short>([0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0xAA, 0xBB, 0xCC], context: "test")
        #expect(try reader.u32("token") == 1)
        #expect(try reader.u8("state") == 2)
        try reader.skip(1, "reason")
        #expect(try reader.u16("pair") == 0xBBAA)
        #expect(reader.remaining == 1)
        #expect(reader.rest() == [0xCC])
        #expect(reader.remaining == 0)
        var wide = LittleEndianReader<Short>([0x78, 0x56, 0x34, 0x12, 0xF0, 0xDE, 0xBC, 0x9A], context: "test")
        #expect(try wide.uint(UInt64.self, "all") == 0x9ABC_DEF0_1234_5678)
    }

    @Test func aShortInputNamesTheFieldAndLeavesTheReaderWhereItWas() throws {
        var reader = LittleEndianReader<Short>([0x01, 0x02, 0x03], context: "MSG")
        _ = try reader.u8("first")
        #expect(throws: Short(context: "MSG", field: "second", needed: 4, available: 2)) { try reader.u32("second") }
        #expect(throws: Short(context: "MSG", field: "negative", needed: -1, available: 2)) { try reader.take(-1, "negative") }
        #expect(try reader.u16("rest") == 0x0302)
    }

    @Test func appendsLittleEndianOctets() {
        var bytes: [UInt8] = []
        bytes.appendLE(UInt16(0x0102))
        bytes.appendLE(UInt32(0xA1B2_C3D4))  // pcap's magic number as a little-endian file holds it
        bytes.appendLE(Int8(-1))
        #expect(bytes == [0x02, 0x01, 0xD4, 0xC3, 0xB2, 0xA1, 0xFF])
    }
}
