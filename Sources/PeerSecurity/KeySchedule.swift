import Crypto

/// Every key of peer protocol v2 that comes from the event's `GroupKey`: HKDF-SHA256 (RFC 5869)
/// with salt "nearby-bridge v2" and one info label per use, so no two uses share key material.
///
/// | label | bytes | use |
/// |---|---|---|
/// | `handshake psk` | 32 | the Noise handshake's pre-shared key |
/// | `advert` | 64 | private adverts: encryption key (first 32), MAC key (last 32) |
/// | `fingerprint` | 4 | shown in logs to compare keys; never used on the air |
package enum KeySchedule {
    static let salt = Array("nearby-bridge v2".utf8)

    package static func derive(from key: GroupKey, label: String, count: Int) -> [UInt8] {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: key.bytes), salt: salt, info: Array(label.utf8), outputByteCount: count
        ).withUnsafeBytes { Array($0) }
    }

    package static func handshakePSK(_ key: GroupKey) -> [UInt8] { derive(from: key, label: "handshake psk", count: 32) }

    package static func advertKeys(_ key: GroupKey) -> (encryption: [UInt8], authentication: [UInt8]) {
        let both = derive(from: key, label: "advert", count: 64)
        return (Array(both[..<32]), Array(both[32...]))
    }
}
