import Crypto

/// ChaCha20-Poly1305 with Noise's nonce: 32 zero bits, then the 64-bit counter little-endian.
enum AEAD {
    static let tagSize = 16

    static func nonce(_ counter: UInt64) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 4)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift))) }
        // 12 bytes is exactly ChaChaPoly's nonce size, so this cannot fail.
        return try! ChaChaPoly.Nonce(data: bytes)
    }

    static func seal(_ plaintext: [UInt8], key: [UInt8], nonce counter: UInt64, authenticating ad: [UInt8]) -> [UInt8] {
        // ChaChaPoly.seal throws only for a key or nonce of the wrong size; both are fixed here.
        let box = try! ChaChaPoly.seal(plaintext, using: SymmetricKey(data: key), nonce: nonce(counter), authenticating: ad)
        return Array(box.ciphertext) + Array(box.tag)
    }

    /// nil when the ciphertext, the associated data or the key do not match.
    static func open(_ ciphertext: [UInt8], key: [UInt8], nonce counter: UInt64, authenticating ad: [UInt8]) -> [UInt8]? {
        guard ciphertext.count >= tagSize else { return nil }
        guard
            let box = try? ChaChaPoly.SealedBox(
                nonce: nonce(counter), ciphertext: ciphertext.dropLast(tagSize), tag: ciphertext.suffix(tagSize)),
            let plaintext = try? ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: ad)
        else { return nil }
        return Array(plaintext)
    }
}
