import Foundation
import GATTDBus
import Testing

/// `run` picks the phones' GATT backend by whether org.bluez has an owner: checked on a private
/// bus before and after bluetoothd's stand-in takes the name.
@Suite struct BusNameOwnerTests {
    @Test func org_bluezIsOwnedOnlyOnceBluetoothdsStandInHoldsIt() throws {
        let bus = try PrivateBus()
        #expect(try BusNameOwner.exists("org.bluez", on: .address(bus.address)) == false)
        let standIn = try bus.gattManagerStandIn()
        #expect(standIn.line { $0 == "ready" } != nil)
        #expect(try BusNameOwner.exists("org.bluez", on: .address(bus.address)))
        #expect(try BusNameOwner.exists("org.freedesktop.DBus", on: .address(bus.address)))
    }

    @Test func aBusThatIsNotThereIsAnError() {
        #expect(throws: BusFailure.self) { try BusNameOwner.exists("org.bluez", on: .address("unix:path=/nonexistent/bus")) }
    }
}
