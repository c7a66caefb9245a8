import ByteCoding
import Crypto
import PeerProtocol

/// Every key of peer protocol v2 that comes from the event's `GroupKey`: HKDF-SHA256 (RFC 5869)
/// with salt "nearby-bridge v2" and one info label per use, so no two uses share key material.
///
/// | label | bytes | use |
/// |---|---|---|
/// | `handshake psk` | 32 | the Noise handshake's pre-shared key |
/// | `advert` | 64 | private adverts: encryption key (first 32), MAC key (last 32) |
/// | `fingerprint` | 4 | shown in logs to compare keys; never used on the air |
/// | `irk` ‖ peer id (u64 LE) | 16 | the rig's identity resolving key: its LE privacy addresses, which peers resolve |
package enum KeySchedule {
    static let salt = Array("nearby-bridge v2".utf8)

    package static func derive(from key: GroupKey, label: String, count: Int) -> [UInt8] {
        derive(from: key, info: Array(label.utf8), count: count)
    }

    private static func derive(from key: GroupKey, info: [UInt8], count: Int) -> [UInt8] {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: key.bytes), salt: salt, info: info, outputByteCount: count)
            .withUnsafeBytes { Array($0) }
    }

    package static func handshakePSK(_ key: GroupKey) -> [UInt8] { derive(from: key, label: "handshake psk", count: 32) }

    package static func advertKeys(_ key: GroupKey) -> (encryption: [UInt8], authentication: [UInt8]) {
        let both = derive(from: key, label: "advert", count: 64)
        return (Array(both[..<32]), Array(both[32...]))
    }

    /// The identity resolving key of the rig with `peer` id, as the Core specification writes an
    /// IRK (most significant octet first; mgmt's Set Privacy takes it reversed). The rig's
    /// kernel makes its resolvable private addresses with it, and any rig of the event can
    /// check that an advert naming `peer` came from one of them: a replay from another address
    /// does not resolve (`ResolvablePrivateAddress`). Per peer id, so the addresses of two rigs
    /// do not resolve with each other's key, and a new run (a new peer id) has a new key.
    package static func identityResolvingKey(_ key: GroupKey, peer: PeerID) -> [UInt8] {
        var info = Array("irk".utf8)
        info.appendLE(peer.rawValue)
        return derive(from: key, info: info, count: 16)
    }
}
