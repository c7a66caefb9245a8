import Foundation
import BLE
import PeerProtocol
import Testing
@testable import BlueZMgmt
import BLEBlueZ

/// Our advertising payload against Google Bumble's AdvertisingData encoder
/// (Fixtures/make-fixtures.py made the fixture from the field values in docs/PROTOCOL.md).
@Suite struct AdvertisingDataFixtureTests {
    struct Fixture: Decodable {
        var advertising_data: String
        var scan_response: String
        var long_name: String
        var long_name_scan_response: String
    }

    func fixture() throws -> Fixture {
        let url = try #require(Bundle.module.url(forResource: "advertising-data", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }

    func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    @Test func ourAdvertMatchesBumblesEncoding() throws {
        let fixture = try fixture()
        let advert = Advertisement(
            group: 0x0102, peerID: PeerID(0x1122_3344_5566_7788), uwbShortAddress: 0xDD5F, capabilities: [.uwb], psm: 0x85)
        #expect(advert.advertisingData() == bytes(fixture.advertising_data))
        #expect(try Advertisement.find(in: bytes(fixture.advertising_data) + bytes(fixture.scan_response)) == advert)
    }

    /// The scan response's name: whole as Complete Local Name, or cut at a character boundary to
    /// the 29 bytes a legacy scan response leaves and labelled Shortened Local Name.
    @Test func ourNameMatchesBumblesEncoding() throws {
        let fixture = try fixture()
        #expect(AdvertisingData.localName("Booth rig").bytes == bytes(fixture.scan_response))
        let long = AdvertisingData.localName(fixture.long_name)
        #expect(long.bytes == bytes(fixture.long_name_scan_response))
        #expect(long.bytes.count <= AdvertisingData.legacyLimit)
        #expect(AdvertisingData(bytes(fixture.advertising_data) + bytes(fixture.scan_response)).localName == "Booth rig")
        #expect(long.localName.map { fixture.long_name.hasPrefix($0) } == true)
    }

    /// Walking AD structures: every one in order with its place; a zero length ends the data; a
    /// structure running past the end is dropped with the rest; the advert/scan response split.
    @Test func structuresAreWalkedAsReceiversDo() throws {
        let fixture = try fixture()
        let blob = AdvertisingData(bytes(fixture.advertising_data) + bytes(fixture.scan_response))
        #expect(blob.map(\.type) == [AdvertisingData.flags, AdvertisingData.manufacturerSpecific, AdvertisingData.completeLocalName])
        #expect(blob.map(\.range) == [0..<3, 3..<24, 24..<35])
        let (advertising, scanResponse) = blob.split()
        #expect(advertising == bytes(fixture.advertising_data) && scanResponse == bytes(fixture.scan_response))
        #expect(AdvertisingData([0x02, 0x01, 0x06, 0x00, 0x02, 0x09, 0x41]).map(\.type) == [0x01])
        #expect(AdvertisingData([0x02, 0x01, 0x06, 0x05, 0x09, 0x41]).map(\.type) == [0x01])
        #expect(AdvertisingData([0x02, 0x0A, 0x00, 0x02, 0x01, 0x06]).removing(AdvertisingData.flags).bytes == [0x02, 0x0A, 0x00])
    }
}
