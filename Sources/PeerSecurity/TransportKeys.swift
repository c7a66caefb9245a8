import Crypto

/// What a finished handshake gives each side: one key per direction and the handshake hash.
package struct TransportKeys: Sendable, Equatable {
    package let sending: [UInt8]
    package let receiving: [UInt8]
    /// Noise's `h` after the last message: identifies this handshake (channel binding).
    package let handshakeHash: [UInt8]

    /// Secret material for the link's UWB sessions: HKDF-SHA256 over both transport keys
    /// (initiator's first), salted with the handshake hash, label "nearby-bridge v2 ranging".
    /// Both sides compute the same value; it never crosses the air.
    package var rangingSecret: [UInt8] {
        let (i2r, r2i) = role == .initiator ? (sending, receiving) : (receiving, sending)
        return HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: i2r + r2i), salt: handshakeHash, info: Array("nearby-bridge v2 ranging".utf8),
            outputByteCount: 32
        ).withUnsafeBytes { Array($0) }
    }

    let role: NoiseHandshake.Role
}
