import BlueZMgmt
import Testing

@testable import BLEBlueZ

/// The statuses are the ones Linux 6.1's mgmt.c answers: Start Discovery says Busy unless the
/// discovery state is STOPPED; Stop Discovery says Rejected unless a discovery is active and
/// Invalid Parameters when the active one has another type.
struct DiscoveryWatchdogTests {
    @Test func theWedgeSignaturePowerCyclesAfterThreeCyclesInARow() {
        var watchdog = DiscoveryWatchdog()
        #expect(watchdog.restarted(stop: .rejected, start: .busy) == .wedged)
        #expect(watchdog.restarted(stop: .rejected, start: .busy) == .wedged)
        #expect(watchdog.restarted(stop: .rejected, start: .busy) == .powerCycle)
        // The count starts over after acting, so a power cycle that did not help is retried later, not every cycle.
        #expect(watchdog.restarted(stop: .rejected, start: .busy) == .wedged)
    }

    @Test func aWorkingCycleInBetweenStartsTheCountOver() {
        var watchdog = DiscoveryWatchdog()
        #expect(watchdog.restarted(stop: .rejected, start: .busy) == .wedged)
        #expect(watchdog.restarted(stop: .rejected, start: .busy) == .wedged)
        #expect(watchdog.restarted(stop: .success, start: .success) == .fine)
        #expect(watchdog.restarted(stop: .rejected, start: .busy) == .wedged)
        #expect(watchdog.restarted(stop: .rejected, start: .busy) == .wedged)
    }

    /// Linux 6.1 answers Stop Discovery a moment before its state says stopped: a Busy Start
    /// right after a successful Stop is tried once more; a Busy after any other Stop answer is
    /// not (the wedge, or another program's discovery of another type).
    @Test func onlyABusyStartRightAfterASuccessfulStopIsTriedAgain() {
        #expect(DiscoveryWatchdog.startsAgain(stop: .success, start: .busy))
        #expect(!DiscoveryWatchdog.startsAgain(stop: .rejected, start: .busy))
        #expect(!DiscoveryWatchdog.startsAgain(stop: .invalidParameters, start: .busy))
        #expect(!DiscoveryWatchdog.startsAgain(stop: .success, start: .success))
        #expect(!DiscoveryWatchdog.startsAgain(stop: .success, start: .notPowered))
    }

    /// Another program's discovery is busy for a good reason: never power-cycle for it.
    @Test func anotherProgramsDiscoveryIsLeftAlone() {
        var watchdog = DiscoveryWatchdog()
        for _ in 0..<10 {
            #expect(watchdog.restarted(stop: .invalidParameters, start: .busy) == .fine)
        }
        for _ in 0..<10 {
            #expect(watchdog.restarted(stop: .rejected, start: .notPowered) == .fine)
        }
    }
}
