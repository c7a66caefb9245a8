import Testing

@testable import BLEBlueZ

/// The order of these calls is the order in which BlueZAdapter's reader thread and its tasks
/// can run them; the crossing one is what the two-rig VM's bluetoothd restart produced.
struct AdapterPowerTests {
    /// bluetoothd's power-on event is handled after the rig's Read Controller Information went
    /// out (the answer said off) and before that answer is used: the event is newer.
    @Test func anEventHandledAfterTheReadWentOutOutweighsItsAnswer() {
        var power = AdapterPower()
        let read = power.readSent()
        #expect(power.settingsChanged(powered: true) == false)
        #expect(power.answered(powered: false, to: read) == true)
        #expect(power.powered)
    }

    @Test func aReadWithNoEventSinceItWentOutIsTheNews() {
        var power = AdapterPower()
        #expect(power.settingsChanged(powered: true) == false)
        let read = power.readSent()
        #expect(power.answered(powered: false, to: read) == false)
        // and the other way: the rig's own power-on, which no event reports to its socket
        let next = power.readSent()
        #expect(power.answered(powered: true, to: next) == true)
    }

    @Test func eachEventReportsTheSettingBeforeIt() {
        var power = AdapterPower()
        power.commanded(powered: true)
        #expect(power.settingsChanged(powered: false) == true)
        #expect(power.settingsChanged(powered: false) == false)
        #expect(power.settingsChanged(powered: true) == false)
        #expect(power.powered)
    }
}
