@testable import NearbyInteractionAccessory

/// Shareable configuration data written by hand from the layout in Apple's Nearby Interaction
/// Accessory Protocol Specification R4, as AOSP's ranging test app reads it
/// (IosAccessoryConfigurationData.java, `AppleUwbConfigData.deserialize`): a 5-octet header whose
/// length octet counts what follows (25 for 1.1, 30 for 2.0), then little-endian fields.
enum Blobs {
    static let version1_1: [UInt8] = [
        0x01, 0x00, 0x01, 0x00,  // version 1.1
        25,  // length
        0x55, 0x53,  // country code "US"
        0x78, 0x56, 0x34, 0x12,  // session id 0x12345678
        10,  // preamble code index
        9,  // channel
        25, 0x00,  // slots per round
        0x60, 0x09,  // slot duration 2400 RSTU
        240, 0x00,  // ranging interval 240 ms
        0x03,  // ranging round control
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06,  // static STS IV
        0xC4, 0xD3,  // destination short address
        20, 0x00,  // maximum clock drift 20 ppm
    ]

    static let version2_0: [UInt8] = [
        0x02, 0x00, 0x00, 0x00,  // version 2.0
        30,  // length
        0x4A, 0x50,  // country code "JP"
        0xEF, 0xBE, 0xAD, 0xDE,  // session id 0xDEADBEEF
        11,  // preamble code index
        5,  // channel
        6, 0x00,  // slots per round
        0x10, 0x0E,  // slot duration 3600 RSTU
        96, 0x00,  // ranging interval 96 ms
        0x02,  // ranging round control
        0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5,  // static STS IV
        0x34, 0x12,  // destination short address
        200, 0x00,  // maximum clock drift 200 ppm
        0x00, 0x00, 0x00, 0x00,  // reserved
        0x01,  // hopping on
    ]

    /// A board on channels 5 and 9 with the BPRF preamble codes, that hops.
    static let board = AccessoryCapabilities(channels: [5, 9], hopping: true)

    /// `blob` with the octets at `offset` replaced.
    static func patched(_ blob: [UInt8], at offset: Int, _ octets: [UInt8]) -> [UInt8] {
        var copy = blob
        copy.replaceSubrange(offset..<offset + octets.count, with: octets)
        return copy
    }
}
