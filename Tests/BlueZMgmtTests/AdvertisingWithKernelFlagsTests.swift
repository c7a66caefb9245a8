import Foundation
import BLE
import PeerProtocol
import Testing
@testable import BlueZMgmt
import BLEBlueZ

@Suite struct AdvertisingWithKernelFlagsTests {
    /// With Add Advertising's discoverable flag the kernel writes the Flags AD itself, so ours
    /// must go, leaving the rest byte for byte (and within 31 - 3 bytes).
    @Test func flagsADIsRemovedAndNothingElse() {
        let advert = Advertisement(group: 1, peerID: PeerID(42), uwbShortAddress: 7, capabilities: [.uwb], psm: 0x85).advertisingData()
        let stripped = BlueZAdapter.withoutFlags(advert)
        #expect(stripped == Array(advert.dropFirst(3)))
        #expect(stripped.count <= 28)
        #expect(BlueZAdapter.withoutFlags(stripped) == stripped)
        #expect(BlueZAdapter.withoutFlags([0x02, 0x0A, 0x00, 0x02, 0x01, 0x06]) == [0x02, 0x0A, 0x00])
    }
}
