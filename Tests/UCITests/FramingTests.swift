import Testing
import UCI

@Suite("Packets, segmentation and the stream decoder")
struct FramingTests {
    @Test func segments300ByteControlPayloadInto255And45() throws {
        // AOSP uwb_uci_packets lib.rs `From<UciControlPacket> for Vec<UciControlPacketHal>` chunks
        // control payloads by MAX_PAYLOAD_LEN = 255 and sets PBF on all but the last chunk.
        let payload = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        let message = UCIMessage(messageType: .notification, groupID: 2, opcodeID: 0, payload: payload)
        let packets = message.packets()
        #expect(packets.map(\.payload.count) == [255, 45])
        #expect(packets.map(\.isFinalSegment) == [false, true])
        let wire = message.encoded()
        #expect(Array(wire[0..<4]) == [0x72, 0x00, 0x00, 0xFF])  // MT 3 | PBF | GID 2, length 255
        #expect(Array(wire[259..<263]) == [0x62, 0x00, 0x00, 0x2D])  // PBF clear, length 45
        #expect(wire.count == 300 + 8)
        #expect(try decodeWire(wire) == message)
    }

    @Test func reassemblesQorvoStyle250ByteChunks() throws {
        // Qorvo's UQT splits outgoing messages at 250 octets (sasodoma/uwb-ranging:
        // new_python_script/uci/core.py send_message); any chunking must reassemble.
        let payload = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let first = UCIPacket(messageType: .command, isFinalSegment: false, groupID: 1, opcodeID: 3, payload: Array(payload[0..<250]))
        let last = UCIPacket(messageType: .command, groupID: 1, opcodeID: 3, payload: Array(payload[250...]))
        #expect(first.encoded().prefix(4) == [0x31, 0x03, 0x00, 0xFA])
        let message = try decodeWire(first.encoded() + last.encoded())
        #expect(message == UCIMessage(messageType: .command, groupID: 1, opcodeID: 3, payload: payload))
    }

    @Test func emptyPayloadIsOnePacket() {
        let packets = UCICommand.getDeviceInfo.message.packets()
        #expect(packets == [UCIPacket(messageType: .command, groupID: 0, opcodeID: 2, payload: [])])
    }

    @Test func dataPacketHasTwoOctetLength() throws {
        // DATA_MESSAGE_RCV as pica sends it (google/pica:src/lib.rs DataMessageRcv; pdl
        // DataMessageRcv: session_handle(4) status(1) source_address(8) seq(2) size(2) data).
        // Data header: octet 0 = MT 0 | DPF 2, octet 1 RFU, octets 2-3 length LE. Constructed.
        var payload: [UInt8] = [0x2A, 0, 0, 0, 0x00, 0x5F, 0xDD, 0, 0, 0, 0, 0, 0, 0x01, 0x00]
        let data = (0..<283).map { UInt8(truncatingIfNeeded: $0) }
        payload += [UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data
        #expect(payload.count == 0x12C)
        let message = UCIMessage(messageType: .data, groupID: 0x2, opcodeID: 0, payload: payload)
        let wire = message.encoded()
        #expect(Array(wire[0..<4]) == [0x02, 0x00, 0x2C, 0x01])
        #expect(wire.count == 4 + 300)
        let parsed = try #require(try UCIPacket.parse(wire[...]))
        #expect(parsed.consumed == wire.count)
        #expect(parsed.packet.groupID == 2 && parsed.packet.opcodeID == 0 && parsed.packet.isFinalSegment)
        #expect(try decodeWire(wire) == message)
    }

    @Test func dataSegmentsUseMaxDataPayload() throws {
        // AOSP fragment_data_msg_send chunks DATA_MESSAGE_SND by the UWBS's max data payload.
        let message = UCIMessage(messageType: .data, groupID: 0x1, opcodeID: 0, payload: [UInt8](repeating: 0xAB, count: 250))
        let packets = message.packets(maxDataPayload: 100)
        #expect(packets.map(\.payload.count) == [100, 100, 50])
        #expect(packets.map { $0.encoded()[0] } == [0x11, 0x11, 0x01])
        #expect(packets[0].encoded()[2...3] == [100, 0])
        var reassembler = UCIReassembler()
        #expect(try reassembler.push(packets[0]) == nil)
        #expect(try reassembler.push(packets[1]) == nil)
        #expect(try reassembler.push(packets[2]) == message)
    }

    @Test func parseNeedsWholePacketAndHonoursSliceIndices() throws {
        let wire = bytes("99 99 61 02 00 06 01 02 03 04 02 21 60")
        let slice = wire[2...]  // start index 2, not 0
        for end in 2..<12 {
            #expect(try UCIPacket.parse(wire[2..<end]) == nil)
        }
        let parsed = try #require(try UCIPacket.parse(slice))
        #expect(parsed.consumed == 10)
        #expect(parsed.packet == UCIPacket(
            messageType: .notification, groupID: 1, opcodeID: 2, payload: bytes("01 02 03 04 02 21")))
        #expect(try UCIPacket.parse([][...]) == nil)
    }

    @Test func byteAtATimeMatchesAllAtOnce() throws {
        let messages = [
            UCIResponse.sessionInit(.ok, sessionHandle: 7).message,
            UCINotification.sessionStatus(session: 7, state: .idle, reason: .stateChangeWithSessionManagementCommands).message,
            UCIMessage(messageType: .notification, groupID: 2, opcodeID: 0, payload: [UInt8](repeating: 1, count: 600)),
            UCIMessage(messageType: .data, groupID: 2, opcodeID: 0, payload: [1, 2, 3]),
        ]
        let wire = messages.flatMap { $0.encoded() }
        var decoder = UCIStreamDecoder()
        var decoded: [UCIMessage] = []
        for byte in wire {
            decoder.append([byte])
            while let message = try decoder.next() { decoded.append(message) }
        }
        #expect(decoded == messages)
        #expect(decoder.discardedByteCount == 0)
    }

    /// A recycled message lends its payload's storage to the next one: nothing of it may show in
    /// a shorter message, nor may a copy the caller kept change.
    @Test func recycledPayloadStorageCarriesNothingOver() throws {
        let long = UCIMessage(messageType: .notification, groupID: 2, opcodeID: 0, payload: [UInt8](repeating: 7, count: 200))
        let short = UCINotification.deviceStatus(.ready).message
        var decoder = UCIStreamDecoder()
        decoder.append(long.encoded() + short.encoded() + long.encoded())
        let first = try #require(try decoder.next())
        let kept = first
        decoder.recycle(first)
        let second = try #require(try decoder.next())
        #expect(second == short)
        #expect(kept == long)
        decoder.recycle(second)
        #expect(try decoder.next() == long)
    }

    @Test func controlAndDataReassembleIndependently() throws {
        let control = UCIMessage(messageType: .notification, groupID: 2, opcodeID: 0, payload: [UInt8](repeating: 9, count: 400))
        let data = UCIMessage(messageType: .data, groupID: 2, opcodeID: 0, payload: [UInt8](repeating: 8, count: 30))
        let c = control.packets(), d = data.packets(maxDataPayload: 20)
        var reassembler = UCIReassembler()
        #expect(try reassembler.push(c[0]) == nil)
        #expect(try reassembler.push(d[0]) == nil)
        #expect(try reassembler.push(d[1]) == data)
        #expect(try reassembler.push(c[1]) == control)
    }

    @Test func garbageIsSkippedOnceThenDecodingResumes() throws {
        var decoder = UCIStreamDecoder()
        // 0x80-0xFF carry reserved MT 4-7; 0x00 and 0x05 are MT 0 with no known DPF.
        decoder.append(bytes("ff 80 00 05 9a") + UCICommand.getCapsInfo.message.encoded())
        #expect(throws: UCIError.garbage(skipped: 5)) { try decoder.next() }
        #expect(try decoder.next() == UCICommand.getCapsInfo.message)
        #expect(decoder.discardedByteCount == 5)
        #expect(try decoder.next() == nil)
    }

    @Test func dataHeaderLongerThanMessageLimitIsNoise() throws {
        // A DATA_RCV header announcing 0xF000 octets can never be accepted with a 4096 limit,
        // so it is dropped rather than swallowing the packets behind it.
        var decoder = UCIStreamDecoder(maxMessageSize: 4096)
        decoder.append(bytes("02 00 00 f0") + UCINotification.deviceStatus(.ready).message.encoded())
        #expect(throws: UCIError.garbage(skipped: 4)) { try decoder.next() }
        #expect(try decoder.next() == UCINotification.deviceStatus(.ready).message)
    }

    @Test func waitsForAMoreCompleteDataHeader() throws {
        var decoder = UCIStreamDecoder()
        decoder.append([0x02, 0x00])
        #expect(try decoder.next() == nil)
        decoder.append([0x01, 0x00, 0xEE])
        #expect(try decoder.next() == UCIMessage(messageType: .data, groupID: 2, opcodeID: 0, payload: [0xEE]))
    }

    @Test func mismatchDropsPartialAndNextPacketStartsFresh() throws {
        var decoder = UCIStreamDecoder()
        let big = UCIResponse.getAppConfig(.ok, [AppConfigTLV(id: .sessionKey, value: [UInt8](repeating: 5, count: 200)),
                                                 AppConfigTLV(id: .subSessionKey, value: [UInt8](repeating: 6, count: 200))]).message
        let segments = big.packets()
        decoder.append(segments[0].encoded())
        decoder.append(UCINotification.genericError(.failed).message.encoded())
        decoder.append(UCINotification.deviceStatus(.active).message.encoded())
        #expect(throws: UCIError.segmentMismatch(
            expected: "response GID 0x01 OID 0x04", got: "notification GID 0x00 OID 0x07")) { try decoder.next() }
        #expect(try decoder.next() == UCINotification.deviceStatus(.active).message)
        // The orphaned last segment is now complete on its own; the decoder stays usable.
        decoder.append(segments[1].encoded())
        #expect(try decoder.next()?.payload.count == segments[1].payload.count)
    }

    @Test func oversizedMessageIsRejectedAndItsTailSkipped() throws {
        var reassembler = UCIReassembler(maxMessageSize: 300)
        let message = UCIMessage(messageType: .notification, groupID: 2, opcodeID: 0, payload: [UInt8](repeating: 3, count: 700))
        let segments = message.packets()
        #expect(segments.count == 3)
        #expect(try reassembler.push(segments[0]) == nil)
        #expect(throws: UCIError.messageTooLarge(size: 510, limit: 300)) { try reassembler.push(segments[1]) }
        #expect(try reassembler.push(segments[2]) == nil)  // tail of the rejected message
        let next = UCINotification.deviceStatus(.ready).message
        #expect(try reassembler.push(next.packets()[0]) == next)
    }

    @Test func oversizedTailEndsWhenAnotherMessageArrives() throws {
        var reassembler = UCIReassembler(maxMessageSize: 100)
        let segment = UCIPacket(messageType: .notification, isFinalSegment: false, groupID: 2, opcodeID: 0, payload: [UInt8](repeating: 0, count: 200))
        #expect(throws: UCIError.messageTooLarge(size: 200, limit: 100)) { try reassembler.push(segment) }
        let status = UCINotification.deviceStatus(.error).message
        #expect(try reassembler.push(status.packets()[0]) == status)
    }
}
