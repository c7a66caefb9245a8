import Crypto

/// `Noise_NNpsk0_25519_ChaChaPoly_SHA256` (the Noise Protocol Framework, revision 34), the peer
/// channel's key exchange:
///
/// ```
/// -> psk, e
/// <- e, ee
/// ```
///
/// Both sides prove they hold the event's key (the PSK) and agree fresh transport keys from
/// ephemeral X25519 keys, so recorded traffic stays secret even if the event key leaks later.
/// No static keys: every rig of the event holds the same key, so the key proves membership, not
/// which rig; the peer id inside the encrypted `hello` names the rig. Pure: the ephemeral key
/// comes in from the caller (fresh from `Curve25519.KeyAgreement.PrivateKey()` on the air, fixed
/// in the test vectors), so the same inputs give the same bytes as any other Noise implementation.
package struct NoiseHandshake: Sendable {
    package static let protocolName = "Noise_NNpsk0_25519_ChaChaPoly_SHA256"
    /// Bound into the handshake hash: a transcript of another protocol or version never verifies.
    package static let prologue = Array("nearby-bridge peer protocol v2".utf8)
    /// An ephemeral public key and the AEAD tag of the (empty) payload.
    package static let messageSize = 32 + 16

    package enum Role: Sendable { case initiator, responder }

    private enum Step: Sendable { case start, awaitingResponse, done }

    package let role: Role
    private var state: SymmetricState
    private let ephemeral: EphemeralKey
    /// The peer's ephemeral public key, raw (swift-crypto's key types are not `Sendable`).
    private var remoteEphemeral: [UInt8]?
    private var step = Step.start

    /// The ephemeral private key, kept as the object the caller made. swift-crypto's key types are
    /// not `Sendable`, but this value is never changed after `init`; remaking it from its raw
    /// bytes at each use would derive its public key again each time (an X25519 scalar
    /// multiplication, as dear as the key agreement itself: three of them per handshake, where
    /// the one the caller's key made at its creation is enough).
    private struct EphemeralKey: @unchecked Sendable {
        let privateKey: Curve25519.KeyAgreement.PrivateKey
        var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }
    }

    package init(role: Role, psk: [UInt8], ephemeral: Curve25519.KeyAgreement.PrivateKey, prologue: [UInt8] = Self.prologue) {
        self.role = role
        self.ephemeral = EphemeralKey(privateKey: ephemeral)
        state = SymmetricState(protocolName: Self.protocolName)
        state.mixHash(prologue)
        // psk0: the PSK is mixed in before the first message.
        state.mixKeyAndHash(psk)
    }

    /// Initiator, first message: `e`, then the payload encrypted under a key only PSK holders have.
    package mutating func writeInitiation(payload: [UInt8] = []) -> [UInt8] {
        precondition(role == .initiator && step == .start, "the initiator writes the first message once")
        let e = ephemeral.publicKey
        state.mixHash(e)
        state.mixKey(e)  // psk handshakes mix `e` into the key as well
        step = .awaitingResponse
        return e + state.encryptAndHash(payload)
    }

    /// Responder, first message: checks the initiator holds the PSK; returns its payload.
    package mutating func readInitiation(_ message: [UInt8]) throws(HandshakeError) -> [UInt8] {
        precondition(role == .responder && step == .start, "the responder reads the first message once")
        let remote = try readEphemeral(message)
        let e = Array(remote.rawRepresentation)
        remoteEphemeral = e
        state.mixHash(e)
        state.mixKey(e)
        let payload = try state.decryptAndHash(Array(message.dropFirst(32)))
        step = .awaitingResponse
        return payload
    }

    /// Responder, second message: `e, ee`. The handshake is complete on this side.
    package mutating func writeResponse(payload: [UInt8] = []) throws(HandshakeError) -> (message: [UInt8], keys: TransportKeys) {
        precondition(role == .responder && step == .awaitingResponse, "the responder answers after reading the first message")
        guard let remoteEphemeral, let remote = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: remoteEphemeral) else {
            throw .failed
        }
        let e = ephemeral.publicKey
        state.mixHash(e)
        state.mixKey(e)
        state.mixKey(try Self.agree(ephemeral.privateKey, remote))
        let message = e + state.encryptAndHash(payload)
        step = .done
        return (message, state.split(role: .responder))
    }

    /// Initiator, second message: checks the responder holds the PSK and the ephemeral secret.
    package mutating func readResponse(_ message: [UInt8]) throws(HandshakeError) -> (payload: [UInt8], keys: TransportKeys) {
        precondition(role == .initiator && step == .awaitingResponse, "the initiator reads the answer to its message")
        let remote = try readEphemeral(message)
        let e = Array(remote.rawRepresentation)
        state.mixHash(e)
        state.mixKey(e)
        state.mixKey(try Self.agree(ephemeral.privateKey, remote))
        let payload = try state.decryptAndHash(Array(message.dropFirst(32)))
        step = .done
        return (payload, state.split(role: .initiator))
    }

    private func readEphemeral(_ message: [UInt8]) throws(HandshakeError) -> Curve25519.KeyAgreement.PublicKey {
        guard message.count >= Self.messageSize else { throw .malformed("a handshake message is at least \(Self.messageSize) bytes, got \(message.count)") }
        do {
            return try Curve25519.KeyAgreement.PublicKey(rawRepresentation: message[..<32])
        } catch {
            throw .malformed("not an X25519 public key")
        }
    }

    private static func agree(_ own: Curve25519.KeyAgreement.PrivateKey, _ remote: Curve25519.KeyAgreement.PublicKey) throws(HandshakeError) -> [UInt8] {
        do {
            return try own.sharedSecretFromKeyAgreement(with: remote).withUnsafeBytes { Array($0) }
        } catch {
            throw .malformed("X25519 with the peer's ephemeral key failed (a low-order point)")
        }
    }
}

package enum HandshakeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The peer does not hold the event key, or the message was altered.
    case failed
    case malformed(String)

    package var description: String {
        switch self {
        case .failed: "the handshake did not verify: the peer does not hold this event's key, or the message was altered"
        case .malformed(let why): "malformed handshake message: \(why)"
        }
    }
}

/// Noise's SymmetricState and the key of its CipherState (section 5.1 and 5.2 of the spec).
private struct SymmetricState: Sendable {
    private var chainingKey: [UInt8]
    private(set) var hash: [UInt8]
    private var key: [UInt8]?
    private var nonce: UInt64 = 0

    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        hash = name.count <= 32 ? name + [UInt8](repeating: 0, count: 32 - name.count) : Array(SHA256.hash(data: name))
        chainingKey = hash
    }

    mutating func mixHash(_ data: [UInt8]) {
        hash = Array(SHA256.hash(data: hash + data))
    }

    mutating func mixKey(_ inputKeyMaterial: [UInt8]) {
        let out = Self.hkdf(chainingKey, inputKeyMaterial, outputs: 2)
        chainingKey = out[0]
        key = out[1]
        nonce = 0
    }

    mutating func mixKeyAndHash(_ inputKeyMaterial: [UInt8]) {
        let out = Self.hkdf(chainingKey, inputKeyMaterial, outputs: 3)
        chainingKey = out[0]
        mixHash(out[1])
        key = out[2]
        nonce = 0
    }

    mutating func encryptAndHash(_ plaintext: [UInt8]) -> [UInt8] {
        guard let key else {
            mixHash(plaintext)
            return plaintext
        }
        let ciphertext = AEAD.seal(plaintext, key: key, nonce: nonce, authenticating: hash)
        nonce += 1
        mixHash(ciphertext)
        return ciphertext
    }

    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(HandshakeError) -> [UInt8] {
        guard let key else {
            mixHash(ciphertext)
            return ciphertext
        }
        guard let plaintext = AEAD.open(ciphertext, key: key, nonce: nonce, authenticating: hash) else { throw .failed }
        nonce += 1
        mixHash(ciphertext)
        return plaintext
    }

    func split(role: NoiseHandshake.Role) -> TransportKeys {
        let out = Self.hkdf(chainingKey, [], outputs: 2)
        return role == .initiator
            ? TransportKeys(sending: out[0], receiving: out[1], handshakeHash: hash, role: role)
            : TransportKeys(sending: out[1], receiving: out[0], handshakeHash: hash, role: role)
    }

    /// Noise's HKDF: HMAC-SHA256 keyed by the chaining key, then 2 or 3 chained outputs.
    static func hkdf(_ chainingKey: [UInt8], _ inputKeyMaterial: [UInt8], outputs: Int) -> [[UInt8]] {
        let tempKey = hmac(chainingKey, inputKeyMaterial)
        var result: [[UInt8]] = []
        var previous: [UInt8] = []
        for index in 1...outputs {
            previous = hmac(tempKey, previous + [UInt8(index)])
            result.append(previous)
        }
        return result
    }

    static func hmac(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }
}
