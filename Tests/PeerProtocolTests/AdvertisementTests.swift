import Testing

@testable import PeerProtocol

@Suite struct AdvertisementTests {
    let advert = Advertisement(
        group: 0x0102, peerID: PeerID(0x1122_3344_5566_7788), uwbShortAddress: 0xDD5F, capabilities: [.uwb], psm: 0x85)

    /// Bytes written out by hand from the layout table in `Advertisement` (and docs/PROTOCOL.md):
    /// the Flags AD per Core Spec Supplement Part A §1.3, then AD type 0xFF with company 0xFFFF.
    @Test func encodesTheDocumentedLayout() {
        #expect(
            advert.advertisingData() == [
                0x02, 0x01, 0x06,
                0x14, 0xFF, 0xFF, 0xFF, 0x4E, 0x42, 0x01, 0x02, 0x01,
                0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                0x5F, 0xDD, 0x01, 0x85,
            ])
        #expect(advert.advertisingData().count <= 31)
    }

    @Test func findsOurPayloadAmongOtherADStructures() throws {
        let name: [UInt8] = [0x06, 0x09] + Array("alice".utf8)
        let foreign: [UInt8] = [0x05, 0xFF, 0x4C, 0x00, 0x02, 0x15]  // another vendor's AD first
        #expect(try Advertisement.find(in: foreign + advert.advertisingData() + name) == advert)
    }

    @Test func ignoresForeignAndNewerAdvertsCheaply() throws {
        #expect(try Advertisement.find(in: [0x02, 0x01, 0x06, 0x03, 0x03, 0x0F, 0x18]) == nil)
        var newer = advert.advertisingData()
        newer[9] = 2  // payload version 2
        #expect(try Advertisement.find(in: newer) == nil)
        #expect(try Advertisement.find(in: [0x1F, 0xFF]) == nil)  // length runs past the end
        #expect(try Advertisement.find(in: []) == nil)
    }

    @Test func brokenPayloadWithOurMagicIsAnError() {
        var short = advert.advertisingData()
        short.removeLast(3)
        short[3] -= 3
        #expect(throws: PeerProtocolError.truncated(field: "advertisement.uwb_short_address", needed: 2, available: 1)) {
            try Advertisement.find(in: short)
        }
    }
}
