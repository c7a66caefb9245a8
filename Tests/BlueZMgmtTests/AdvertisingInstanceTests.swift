import Foundation
import BLE
import PeerProtocol
import Testing
@testable import BlueZMgmt
import BLEBlueZ

/// Issue 34, item 4: the rig advertises from a free instance, the highest one (bluetoothd counts
/// from 1), never one another client holds.
@Suite struct AdvertisingInstanceTests {
    /// Read Advertising Features return parameters (mgmt-api.txt): supported flags (u32), max
    /// advertising data length, max scan response length, max instances, number of instances,
    /// the instances.
    static func features(max: UInt8, inUse: [UInt8]) throws -> AdvertisingFeatures {
        try AdvertisingFeatures(returnParameters: [0xFF, 0xF3, 0x01, 0x00, 31, 31, max, UInt8(inUse.count)] + inUse)
    }

    @Test func theHighestFreeInstanceIsTaken() throws {
        #expect(try Self.features(max: 5, inUse: []).freeInstance() == 5)
        #expect(try Self.features(max: 5, inUse: [1, 2]).freeInstance() == 5)
        #expect(try Self.features(max: 5, inUse: [1, 5]).freeInstance() == 4)
        #expect(try Self.features(max: 5, inUse: [1, 2, 3, 4, 5]).freeInstance() == nil)
        #expect(try Self.features(max: 0, inUse: []).freeInstance() == nil)
    }

    /// Advertising Added (0x0023) is how mgmt tells the other clients that an instance was added.
    @Test func anotherClientsAddedInstanceIsDecoded() throws {
        #expect(try MgmtEvent(MgmtPacket(datagram: [0x23, 0x00, 0x00, 0x00, 0x01, 0x00, 0x04])) == .advertisingAdded(instance: 4))
    }
}
