import BLE
import ByteCoding
import Crypto
import PeerProtocol

/// The advert of a rig that holds an event key (payload version 2). Only rigs with the same key
/// can read who advertises; to anyone else each rotation period looks like a new, unrelated device.
///
/// Manufacturer-specific AD (type 0xFF), after company id 0xFFFF:
///
/// | off | size | field |
/// |---|---|---|
/// | 0 | 2 | magic "NB" |
/// | 2 | 1 | payload version (2) |
/// | 3 | 5 | rotation nonce (random, new every period) |
/// | 8 | 12 | encrypted body: peer id u64, UWB short address u16, capabilities u8, PSM u8 |
/// | 20 | 4 | tag |
///
/// body XOR the first 12 bytes of HMAC-SHA256(advert encryption key, nonce) is the encrypted
/// body; the tag is the first 4 bytes of HMAC-SHA256(advert MAC key, magic ‖ version ‖ nonce ‖
/// encrypted body) (encrypt-then-MAC; keys from `KeySchedule.advertKeys`). 2 + 2 + 1 + 21 = 26
/// bytes of AD data, 28 with its length and type: with the Flags AD (3 bytes, the kernel's own
/// through mgmt) exactly the 31 bytes of a legacy advert. A 32-bit tag is enough here: a forged advert can only make a
/// rig try a connection, and the handshake refuses anyone without the key. A nonce repeats
/// across rigs with probability 2^-40 per pair of periods, revealing only the XOR of two bodies.
package struct PrivateAdvert: Sendable {
    package static let version: UInt8 = 2
    package static let nonceSize = 5
    static let bodySize = 12
    static let tagSize = 4

    private let encryptionKey: [UInt8]
    private let authenticationKey: [UInt8]

    package init(key: GroupKey) {
        (encryptionKey, authenticationKey) = KeySchedule.advertKeys(key)
    }

    /// Flags (LE General Discoverable, BR/EDR not supported) and the manufacturer-specific AD
    /// structure for `advert` (its group is not sent), as `Advertisement.advertisingData()` is for v1.
    package func advertisingData(for advert: Advertisement, nonce: [UInt8]) -> [UInt8] {
        precondition(nonce.count == Self.nonceSize, "the rotation nonce is 5 bytes")
        var body: [UInt8] = []
        body.appendLE(advert.peerID.rawValue)
        body.appendLE(advert.uwbShortAddress)
        body.append(advert.capabilities.rawValue)
        body.append(advert.psm)
        let sealed = zip(body, keystream(nonce)).map { $0 ^ $1 }
        let header = Advertisement.magic + [Self.version]
        let tag = self.tag(header + nonce + sealed)
        var data: [UInt8] = [0xFF]
        data.appendLE(Advertisement.companyID)
        data += header + nonce + sealed + tag
        return [0x02, 0x01, 0x06, UInt8(data.count)] + data
    }

    /// Finds a version-2 payload among the AD structures and opens it. nil for foreign adverts,
    /// other versions, and adverts of other events (the tag does not verify under our key).
    package func open(_ advertisingData: [UInt8]) -> Advertisement? {
        let headerEnd = 2 + Advertisement.magic.count + 1
        for data in AdvertisingData(advertisingData).compactMap(Self.version2Data) {
            guard data.count == headerEnd + Self.nonceSize + Self.bodySize + Self.tagSize else { continue }
            let nonce = Array(data[headerEnd..<(headerEnd + Self.nonceSize)])
            let sealed = Array(data[(headerEnd + Self.nonceSize)..<(headerEnd + Self.nonceSize + Self.bodySize)])
            let tag = Array(data.suffix(Self.tagSize))
            guard constantTimeEqual(tag, self.tag(Array(data[2..<headerEnd]) + nonce + sealed)) else { continue }
            let body = zip(sealed, keystream(nonce)).map { $0 ^ $1 }
            var peerID: UInt64 = 0
            for index in 0..<8 { peerID |= UInt64(body[index]) << (8 * index) }
            return Advertisement(
                group: 0, peerID: PeerID(peerID), uwbShortAddress: UInt16(body[8]) | UInt16(body[9]) << 8,
                capabilities: Advertisement.Capabilities(rawValue: body[10]), psm: body[11])
        }
        return nil
    }

    /// Whether `advertisingData` holds a version-2 payload at all, ours or another event's.
    package static func isPresent(in advertisingData: [UInt8]) -> Bool {
        AdvertisingData(advertisingData).contains { version2Data($0) != nil }
    }

    /// The data of a manufacturer-specific structure that starts with our company id, magic and
    /// payload version 2; nil for anything else.
    private static func version2Data(_ structure: AdvertisingData.Structure) -> [UInt8]? {
        let data = Array(structure.data)
        guard structure.type == AdvertisingData.manufacturerSpecific, data.count >= 5,
            data[0] == UInt8(Advertisement.companyID & 0xFF), data[1] == UInt8(Advertisement.companyID >> 8),
            Array(data[2..<4]) == Advertisement.magic, data[4] == version
        else { return nil }
        return data
    }

    private func keystream(_ nonce: [UInt8]) -> [UInt8] {
        Array(Array(HMAC<SHA256>.authenticationCode(for: nonce, using: SymmetricKey(data: encryptionKey))).prefix(Self.bodySize))
    }

    private func tag(_ data: [UInt8]) -> [UInt8] {
        Array(Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: authenticationKey))).prefix(Self.tagSize))
    }

    private func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
