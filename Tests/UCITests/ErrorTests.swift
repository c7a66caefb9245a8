import Testing
import UCI

/// Each `UCIError` case triggered on purpose, with its exact value.
@Suite("Malformed, truncated and oversized input")
struct ErrorTests {
    private func message(_ type: MessageType, _ gid: UInt8, _ oid: UInt8, _ payload: String) -> UCIMessage {
        UCIMessage(messageType: type, groupID: gid, opcodeID: oid, payload: bytes(payload))
    }

    @Test func truncated() {
        #expect(throws: UCIError.truncated(what: "SESSION_STATUS_NTF", needed: 6, available: 3)) {
            try UCINotification(message(.notification, 1, 2, "01 02 03"))
        }
        // Second TLV declares 4 value octets, only 2 follow.
        #expect(throws: UCIError.truncated(what: "SESSION_SET_APP_CONFIG_CMD app config value", needed: 4, available: 2)) {
            try UCICommand(message(.command, 1, 3, "2a 00 00 00 02 04 01 09 09 04 78 00"))
        }
        #expect(throws: UCIError.truncated(what: "SESSION_INFO_NTF", needed: 25, available: 24)) {
            try UCINotification(message(.notification, 2, 0, String(repeating: "00 ", count: 24)))
        }
        // Header says 2 measurements, one 31-octet record present.
        let header = "00 00 00 00 2a 00 00 00 00 78 00 00 00 01 00 00 00 00 00 00 00 00 00 00 02 "
        #expect(throws: UCIError.truncated(what: "SESSION_INFO_NTF measurements", needed: 62, available: 31)) {
            try UCINotification(message(.notification, 2, 0, header + String(repeating: "00 ", count: 31)))
        }
        // A lone OK status where GET_DEVICE_INFO_RSP needs versions.
        #expect(throws: UCIError.truncated(what: "CORE_GET_DEVICE_INFO_RSP uci_version", needed: 2, available: 0)) {
            try UCIResponse(message(.response, 0, 2, "00"))
        }
        #expect(throws: UCIError.truncated(what: "SESSION_INIT_RSP session_handle", needed: 4, available: 2)) {
            try UCIResponse(message(.response, 1, 0, "00 01 02"))
        }
        #expect(throws: UCIError.truncated(what: "CORE_GET_CAPS_INFO_RSP capability value", needed: 3, available: 1)) {
            try UCIResponse(message(.response, 0, 3, "00 01 0e 03 05"))
        }
    }

    @Test func invalidMessageType() {
        #expect(throws: UCIError.invalidMessageType(4)) { try UCIPacket.parse([0x80][...]) }
        #expect(throws: UCIError.invalidMessageType(7)) { try UCIPacket.parse([0xFF, 0, 0, 0][...]) }
    }

    @Test func payloadTooLong() {
        var reassembler = UCIReassembler()
        let packet = UCIPacket(messageType: .command, groupID: 1, opcodeID: 3, payload: [UInt8](repeating: 0, count: 256))
        #expect(throws: UCIError.payloadTooLong(length: 256, limit: 255)) { try reassembler.push(packet) }
    }

    @Test func messageTooLarge() throws {
        var decoder = UCIStreamDecoder(maxMessageSize: 300)
        decoder.append(UCIMessage(messageType: .response, groupID: 1, opcodeID: 4, payload: [UInt8](repeating: 0, count: 600)).encoded())
        #expect(throws: UCIError.messageTooLarge(size: 510, limit: 300)) { try decoder.next() }
        #expect(try decoder.next() == nil)
    }

    @Test func segmentMismatch() {
        var reassembler = UCIReassembler()
        let first = UCIPacket(messageType: .data, isFinalSegment: false, groupID: 2, opcodeID: 0, payload: [1])
        let other = UCIPacket(messageType: .data, groupID: 1, opcodeID: 0, payload: [2])
        #expect(throws: Never.self) { try reassembler.push(first) }
        #expect(throws: UCIError.segmentMismatch(expected: "data DPF 0x02", got: "data DPF 0x01")) {
            try reassembler.push(other)
        }
    }

    @Test func garbage() {
        var decoder = UCIStreamDecoder()
        decoder.append([0xE0, 0xA1, 0x99])
        #expect(throws: UCIError.garbage(skipped: 3)) { try decoder.next() }
        #expect(decoder.discardedByteCount == 3)
    }

    @Test func unexpectedMessageType() {
        #expect(throws: UCIError.unexpectedMessageType(.response)) { try UCICommand(message(.response, 0, 2, "")) }
        #expect(throws: UCIError.unexpectedMessageType(.notification)) { try UCIResponse(message(.notification, 0, 1, "01")) }
        #expect(throws: UCIError.unexpectedMessageType(.command)) { try UCINotification(message(.command, 0, 2, "")) }
    }

    @Test func unknownOpcode() {
        // DATA_TRANSFER_STATUS_NTF (GID 2 OID 5) is a real notification this module does not model.
        #expect(throws: UCIError.unknownOpcode(messageType: .notification, groupID: 2, opcodeID: 5)) {
            try UCINotification(message(.notification, 2, 5, "00 00 00 00 01 01 00"))
        }
        #expect(throws: UCIError.unknownOpcode(messageType: .command, groupID: 0xC, opcodeID: 0)) {
            try UCICommand(message(.command, 0xC, 0, ""))  // Android GET_POWER_STATS (SET_COUNTRY_CODE, OID 1, is modelled)
        }
        #expect(throws: UCIError.unknownOpcode(messageType: .response, groupID: 2, opcodeID: 3)) {
            try UCIResponse(message(.response, 2, 3, "00 02 03 04 05"))  // GET_RANGING_COUNT_RSP
        }
    }

    @Test func invalidValue() {
        #expect(throws: UCIError.invalidValue(field: "device_state", value: 3)) {
            try UCINotification(message(.notification, 0, 1, "03"))
        }
        #expect(throws: UCIError.invalidValue(field: "session_state", value: 9)) {
            try UCINotification(message(.notification, 1, 2, "01 00 00 00 09 00"))
        }
        let header = "00 00 00 00 2a 00 00 00 00 78 00 00 00 01 00 03 00 00 00 00 00 00 00 00 00"
        #expect(throws: UCIError.invalidValue(field: "mac_address_mode", value: 3)) {
            try UCINotification(message(.notification, 2, 0, header))
        }
        #expect(throws: UCIError.invalidValue(field: "action", value: 4)) {
            try UCICommand(message(.command, 1, 7, "2a 00 00 00 04 00"))
        }
        #expect(throws: UCIError.invalidValue(field: "reset_config", value: 1)) {
            try UCICommand(message(.command, 0, 0, "01"))
        }
    }

    @Test func lengthMismatch() {
        #expect(throws: UCIError.lengthMismatch(field: "CORE_GET_DEVICE_INFO_RSP vendor_spec_info", declared: 5, actual: 3)) {
            try UCIResponse(message(.response, 0, 2, "00 02 00 01 30 01 30 01 10 05 aa bb cc"))
        }
        #expect(throws: UCIError.lengthMismatch(field: "SESSION_SET_APP_CONFIG_RSP app config statuses", declared: 4, actual: 3)) {
            try UCIResponse(message(.response, 1, 3, "04 02 01 04 08"))
        }
        #expect(throws: UCIError.lengthMismatch(field: "SESSION_GET_APP_CONFIG_CMD app config IDs", declared: 2, actual: 3)) {
            try UCICommand(message(.command, 1, 4, "2a 00 00 00 02 08 09 0a"))
        }
        // Action 2 implies 16-octet keys: 22 octets per controlee, 6 present.
        #expect(throws: UCIError.lengthMismatch(field: "SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_CMD controlees", declared: 22, actual: 6)) {
            try UCICommand(message(.command, 1, 7, "2a 00 00 00 02 01 12 34 46 35 24 13"))
        }
        #expect(throws: UCIError.lengthMismatch(field: "SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_RSP controlee statuses", declared: 3, actual: 2)) {
            try UCIResponse(message(.response, 1, 7, "00 01 12 34"))
        }
    }

    @Test func trailingBytes() {
        #expect(throws: UCIError.trailingBytes(what: "SESSION_START_CMD", count: 1)) {
            try UCICommand(message(.command, 2, 0, "2a 00 00 00 00"))
        }
        #expect(throws: UCIError.trailingBytes(what: "CORE_GET_DEVICE_INFO_CMD", count: 2)) {
            try UCICommand(message(.command, 0, 2, "00 00"))
        }
        #expect(throws: UCIError.trailingBytes(what: "CORE_GET_CAPS_INFO_RSP", count: 1)) {
            try UCIResponse(message(.response, 0, 3, "00 00 ff"))
        }
        #expect(throws: UCIError.trailingBytes(what: "SESSION_INIT_RSP", count: 1)) {
            try UCIResponse(message(.response, 1, 0, "00 01 00 00 00 ff"))
        }
        #expect(throws: UCIError.trailingBytes(what: "CORE_DEVICE_RESET_RSP", count: 1)) {
            try UCIResponse(message(.response, 0, 0, "00 00"))
        }
    }

    @Test func descriptionsAreSentences() {
        let errors: [UCIError] = [
            .truncated(what: "SESSION_STATUS_NTF", needed: 6, available: 3), .invalidMessageType(5),
            .payloadTooLong(length: 256, limit: 255), .messageTooLarge(size: 5000, limit: 4096),
            .segmentMismatch(expected: "a", got: "b"), .garbage(skipped: 2), .unexpectedMessageType(.data),
            .unknownOpcode(messageType: .notification, groupID: 2, opcodeID: 5),
            .invalidValue(field: "device_state", value: 3), .lengthMismatch(field: "x", declared: 1, actual: 2),
            .trailingBytes(what: "SESSION_START_CMD", count: 1),
        ]
        for error in errors {
            #expect(error.description.hasSuffix("."))
            #expect(error.description.first?.isUppercase == true)
        }
        #expect(UCIError.truncated(what: "SESSION_STATUS_NTF", needed: 6, available: 3).description
            == "SESSION_STATUS_NTF is truncated: it needs 6 bytes but only 3 are present.")
        #expect(UCIError.unknownOpcode(messageType: .notification, groupID: 2, opcodeID: 5).description
            == "No notification is known for GID 0x02 OID 0x05.")
        #expect(UCIError.garbage(skipped: 2).description == "Skipped 2 bytes that do not start a UCI packet.")
    }
}
