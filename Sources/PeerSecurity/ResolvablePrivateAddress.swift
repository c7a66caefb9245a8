import BLE
import Crypto
import _CryptoExtras

/// Resolvable private addresses (Core Spec Vol 6 Part B §1.3.2.2), made and resolved with an
/// identity resolving key as a kernel with LE privacy does. Numbers are the specification's:
/// the IRK is its 128-bit value most significant octet first (the sample data's order; Linux
/// stores it reversed), prand and hash are 24-bit values.
package enum ResolvablePrivateAddress {
    /// ah(k, r) = e(k, r') mod 2^24, r' = 104 zero bits ‖ r (Vol 3 Part H §2.2.2); e is AES-128
    /// on one block (CBC with a zero IV and no padding is exactly that).
    package static func ah(irk: [UInt8], prand: UInt32) -> UInt32 {
        let block = [UInt8](repeating: 0, count: 13) + [UInt8(prand >> 16 & 0xFF), UInt8(prand >> 8 & 0xFF), UInt8(prand & 0xFF)]
        let out = Array(
            try! AES._CBC.encrypt(
                block, using: SymmetricKey(data: irk), iv: try! AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16)), noPadding: true))
        return UInt32(out[13]) << 16 | UInt32(out[14]) << 8 | UInt32(out[15])
    }

    /// hash in the 24 least significant bits, prand above; `BLEAddress` bytes are little-endian.
    package static func address(irk: [UInt8], prand: UInt32) -> BLEAddress {
        let hash = ah(irk: irk, prand: prand)
        return BLEAddress(bytes: [hash, hash >> 8, hash >> 16, prand, prand >> 8, prand >> 16].map { UInt8(truncatingIfNeeded: $0) })
    }

    /// Whether `address` is a resolvable private address made with `irk`.
    package static func resolves(_ address: BLEAddress, irk: [UInt8]) -> Bool {
        let b = address.bytes
        guard b[5] >> 6 == 0b01 else { return false }
        return ah(irk: irk, prand: UInt32(b[5]) << 16 | UInt32(b[4]) << 8 | UInt32(b[3]))
            == UInt32(b[2]) << 16 | UInt32(b[1]) << 8 | UInt32(b[0])
    }

    /// A prand from 22 random bits: the top two bits 0b01, and the random part neither all
    /// zeros nor all ones (§1.3.2.2).
    package static func prand(random: UInt64) -> UInt32 {
        var bits = UInt32(truncatingIfNeeded: random) & 0x3F_FFFF
        if bits == 0 || bits == 0x3F_FFFF { bits ^= 1 }
        return 0x40_0000 | bits
    }
}
