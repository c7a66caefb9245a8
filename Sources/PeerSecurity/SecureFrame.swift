import ByteCoding
import PeerProtocol

/// The outer frames of a v2 peer channel, one per L2CAP SDU. Same header as v1 frames
/// (`version u8 | type u8 | length u16 LE | payload`), version 2:
///
/// | type | frame | payload |
/// |---|---|---|
/// | 0x10 | handshake initiation | Noise message 1: ephemeral key [32], tag [16] |
/// | 0x11 | handshake response | Noise message 2: ephemeral key [32], tag [16] |
/// | 0x12 | sealed | sequence number u64, ChaCha20-Poly1305 ciphertext of one v2 `PeerMessage` frame, tag [16] |
///
/// A sealed frame's associated data is its first 12 bytes (header and sequence number), its nonce
/// 32 zero bits followed by the sequence number (little-endian), its key the sender's Noise
/// transport key. Version 1 frames on the same channel are the unencrypted protocol.
package enum SecureFrame: Sendable, Equatable {
    case handshakeInitiation([UInt8])
    case handshakeResponse([UInt8])
    case sealed(sequence: UInt64, box: [UInt8])

    package static let version: UInt8 = 2
    static let sealedHeaderSize = 4 + 8
    /// The largest sealed payload: a sequence number, the largest inner frame, a tag.
    package static let maxPayload = 8 + PeerMessage.headerSize + PeerMessage.maxPayload + AEAD.tagSize

    enum Kind: UInt8 {
        case handshakeInitiation = 0x10, handshakeResponse = 0x11, sealed = 0x12
    }

    /// Whether an SDU is a v2 frame (its version byte), before decoding anything else.
    package static func isVersion2(_ sdu: [UInt8]) -> Bool { sdu.first == version }

    package func encoded() -> [UInt8] {
        var frame: [UInt8] = [Self.version]
        switch self {
        case .handshakeInitiation(let message):
            frame.append(Kind.handshakeInitiation.rawValue)
            frame.appendLE(UInt16(message.count))
            frame += message
        case .handshakeResponse(let message):
            frame.append(Kind.handshakeResponse.rawValue)
            frame.appendLE(UInt16(message.count))
            frame += message
        case .sealed(let sequence, let box):
            frame.append(Kind.sealed.rawValue)
            frame.appendLE(UInt16(8 + box.count))
            frame.appendLE(sequence)
            frame += box
        }
        return frame
    }

    package init(frame: [UInt8]) throws(PeerProtocolError) {
        var reader = LittleEndianReader<PeerProtocolError>(frame, context: "secure frame")
        let version = try reader.u8("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let rawKind = try reader.u8("type")
        let length = Int(try reader.uint(UInt16.self, "length"))
        guard length <= Self.maxPayload else { throw .tooLarge(field: "payload", size: length, limit: Self.maxPayload) }
        guard let kind = Kind(rawValue: rawKind) else { throw .unknownMessageType(rawKind) }
        let payload = try reader.bytes(length, "payload")
        guard reader.remaining == 0 else { throw .trailingBytes(what: "secure frame", count: reader.remaining) }
        switch kind {
        case .handshakeInitiation, .handshakeResponse:
            guard payload.count == NoiseHandshake.messageSize else {
                throw .invalidValue(field: "handshake message length", value: UInt64(payload.count))
            }
            self = kind == .handshakeInitiation ? .handshakeInitiation(payload) : .handshakeResponse(payload)
        case .sealed:
            var body = LittleEndianReader<PeerProtocolError>(payload, context: "sealed frame")
            let sequence = try body.uint(UInt64.self, "sequence")
            guard body.remaining >= AEAD.tagSize else {
                throw .truncated(field: "sealed frame.tag", needed: AEAD.tagSize, available: body.remaining)
            }
            self = .sealed(sequence: sequence, box: try body.bytes(body.remaining, "box"))
        }
    }
}
