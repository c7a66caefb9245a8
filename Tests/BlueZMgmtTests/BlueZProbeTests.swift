import BLEBlueZ
import Testing

@Suite struct BlueZProbeTests {
    /// `devices` prints this for every adapter the kernel lists: it must not claim the backend is missing.
    @Test func aPresentAdapterIsUsable() {
        let text = BlueZProbe.explain(.adapterPresent("hci1"))
        #expect(!text.contains("not implemented"))
        #expect(text.contains("--ble hci1"))
    }

    @Test func aMissingAdapterSaysWhereToLook() {
        #expect(BlueZProbe.explain(.adapterMissing("hci7")).contains("no Bluetooth adapter named hci7"))
    }
}
