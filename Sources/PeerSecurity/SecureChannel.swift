import ByteCoding
import PeerProtocol

/// One direction pair of an established v2 channel: seals outgoing `PeerMessage`s and opens
/// incoming ones. Sequence numbers start at 0 and only go up: a frame whose number is not above
/// the last one accepted (a replay, or reordered) is rejected, and so is any frame that does not
/// authenticate. Lost frames are fine: the next one still opens.
package struct SecureChannel: Sendable {
    private let keys: TransportKeys
    private var nextSequence: UInt64 = 0
    private var lastAccepted: UInt64?

    package init(keys: TransportKeys) { self.keys = keys }

    package var rangingSecret: [UInt8] { keys.rangingSecret }

    package mutating func seal(_ message: PeerMessage) -> [UInt8] {
        seal(frame: message.encoded(version: .v2))
    }

    /// Seals raw inner bytes; `seal(_:)` is the one callers use (tests forge frames with this).
    package mutating func seal(frame plaintext: [UInt8]) -> [UInt8] {
        let sequence = nextSequence
        nextSequence += 1
        let header = Self.associatedData(sequence: sequence, boxSize: plaintext.count + AEAD.tagSize)
        let box = AEAD.seal(plaintext, key: keys.sending, nonce: sequence, authenticating: header)
        return header + box
    }

    package mutating func open(_ frame: SecureFrame) throws(SecureChannelError) -> PeerMessage {
        guard case .sealed(let sequence, let box) = frame else { throw .unexpectedHandshake }
        if let lastAccepted, sequence <= lastAccepted { throw .replayed(sequence: sequence, last: lastAccepted) }
        let header = Self.associatedData(sequence: sequence, boxSize: box.count)
        guard let plaintext = AEAD.open(box, key: keys.receiving, nonce: sequence, authenticating: header) else {
            throw .notAuthentic(sequence: sequence)
        }
        lastAccepted = sequence
        do {
            return try PeerMessage(frame: plaintext, version: .v2)
        } catch {
            throw .undecodable(error)
        }
    }

    static func associatedData(sequence: UInt64, boxSize: Int) -> [UInt8] {
        var header: [UInt8] = [SecureFrame.version, SecureFrame.Kind.sealed.rawValue]
        header.appendLE(UInt16(8 + boxSize))
        header.appendLE(sequence)
        return header
    }
}

package enum SecureChannelError: Error, Equatable, Sendable, CustomStringConvertible {
    case replayed(sequence: UInt64, last: UInt64)
    case notAuthentic(sequence: UInt64)
    case unexpectedHandshake
    case undecodable(PeerProtocolError)

    package var description: String {
        switch self {
        case .replayed(let sequence, let last): "sealed frame \(sequence) is not after \(last): replayed or reordered"
        case .notAuthentic(let sequence): "sealed frame \(sequence) does not authenticate: altered, truncated or not from this peer"
        case .unexpectedHandshake: "a handshake message after the handshake"
        case .undecodable(let error): "sealed frame holds no valid message: \(error)"
        }
    }
}
