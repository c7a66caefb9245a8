import ByteCoding
import Crypto

/// The STS material of one UWB session between two rigs, derived on both sides from their
/// channel's ranging secret (`TransportKeys.rangingSecret`) and the session id, so it never
/// crosses the air: HKDF-SHA256(ikm: ranging secret, no salt, info: "nearby-bridge v2 sts" ‖
/// session id u32 LE), 24 bytes.
///
/// | bytes | use |
/// |---|---|
/// | 0–1 | static STS vendor id (`VENDOR_ID`, u16 LE; 0 becomes 1) |
/// | 2–7 | static STS IV (`STATIC_STS_IV`) |
/// | 8–23 | session key for provisioned STS (`SESSION_KEY`), for boards that support it |
package struct RangingKeys: Sendable, Equatable {
    package let vendorID: UInt16
    package let staticSTSIV: [UInt8]
    package let sessionKey: [UInt8]

    package init(rangingSecret: [UInt8], sessionID: UInt32) {
        var info = Array("nearby-bridge v2 sts".utf8)
        info.appendLE(sessionID)
        let bytes = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: rangingSecret), info: info, outputByteCount: 24
        ).withUnsafeBytes { Array($0) }
        vendorID = max(1, UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        staticSTSIV = Array(bytes[2..<8])
        sessionKey = Array(bytes[8..<24])
    }
}
