/// ATT PDU opcodes (Core Specification Vol 3 Part F §3.4.8): what the server
/// answers, and the ones it must recognise only to ignore.
package enum ATTOpcode: UInt8, Sendable {
    case errorResponse = 0x01
    case exchangeMTURequest = 0x02
    case exchangeMTUResponse = 0x03
    case findInformationRequest = 0x04
    case findInformationResponse = 0x05
    case findByTypeValueRequest = 0x06
    case findByTypeValueResponse = 0x07
    case readByTypeRequest = 0x08
    case readByTypeResponse = 0x09
    case readRequest = 0x0A
    case readResponse = 0x0B
    case readBlobRequest = 0x0C
    case readBlobResponse = 0x0D
    case readMultipleRequest = 0x0E
    case readMultipleResponse = 0x0F
    case readByGroupTypeRequest = 0x10
    case readByGroupTypeResponse = 0x11
    case writeRequest = 0x12
    case writeResponse = 0x13
    case prepareWriteRequest = 0x16
    case prepareWriteResponse = 0x17
    case executeWriteRequest = 0x18
    case executeWriteResponse = 0x19
    case readMultipleVariableResponse = 0x21
    case multipleHandleValueNotification = 0x23
    case handleValueNotification = 0x1B
    case handleValueIndication = 0x1D
    case handleValueConfirmation = 0x1E
    case writeCommand = 0x52
    case signedWriteCommand = 0xD2

    /// Bit 6 of the opcode, the Command Flag (§3.3.1): a command gets no response, not even an
    /// error; an unsupported one is ignored (§3.3).
    package static func isCommand(_ opcode: UInt8) -> Bool { opcode & 0x40 != 0 }

    /// Whether a client sending this is sending something only a server sends (a response,
    /// a notification or an indication): not a request, so it gets no answer.
    package static func isServerToClient(_ opcode: UInt8) -> Bool {
        guard let known = ATTOpcode(rawValue: opcode) else { return false }
        return switch known {
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse, .readByTypeResponse,
            .readResponse, .readBlobResponse, .readMultipleResponse, .readByGroupTypeResponse, .writeResponse,
            .prepareWriteResponse, .executeWriteResponse, .readMultipleVariableResponse, .handleValueNotification,
            .handleValueIndication, .multipleHandleValueNotification:
            true
        default: false
        }
    }
}
