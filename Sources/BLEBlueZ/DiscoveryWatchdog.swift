import BlueZMgmt

/// Tells a discovery the kernel has wedged from one that is busy for a good reason.
///
/// Linux 6.1 (Debian 12, Raspberry Pi OS bookworm) leaves its discovery state in STOPPING when
/// the controller fails the HCI command that ends a scan, e.g. a command timeout while a UART
/// adapter stalls for a moment. From then on Start Discovery answers Busy and Stop Discovery
/// answers Rejected ("no discovery active") until the adapter is powered off; newer kernels
/// reset the state themselves. That pair of answers, cycle after cycle, is the signature. A
/// discovery another program runs is not: our Stop then succeeds (same type) or answers
/// Invalid Parameters (another type), and is left alone.
struct DiscoveryWatchdog {
    enum Verdict: Equatable {
        /// Discovery restarted, or failed for a reason a power cycle would not cure.
        case fine
        /// The wedge signature; not yet for long enough to act.
        case wedged
        /// Wedged for `cyclesBeforePowerCycle` cycles in a row: power-cycle the adapter.
        case powerCycle
    }

    /// Whether to send Start Discovery once more, `startAgainAfter` later. Linux 6.1 answers Stop
    /// Discovery before it records the discovery as stopped (mgmt.c `stop_discovery_complete`:
    /// `mgmt_cmd_complete`, then `hci_discovery_set_state(hdev, DISCOVERY_STOPPED)`, without the
    /// device lock that Start Discovery takes), so a Start sent on that answer can still find the
    /// state STOPPING and answer Busy: the "could not restart discovery … Busy" seen on a loaded
    /// VM. After any other Stop answer a Busy has another cause (the wedge, another program's
    /// discovery) and one more try would not change it.
    static func startsAgain(stop: MgmtStatus, start: MgmtStatus) -> Bool {
        stop == .success && start == .busy
    }

    /// Far longer than the few instructions between the kernel's answer and its state change.
    static let startAgainAfter: Duration = .milliseconds(100)

    /// Three discovery cycles (12 s) rule out a start that is merely still in flight.
    static let cyclesBeforePowerCycle = 3
    private var wedgedCycles = 0

    /// Weighs one restart: the statuses Stop Discovery and then Start Discovery ended with.
    mutating func restarted(stop: MgmtStatus, start: MgmtStatus) -> Verdict {
        guard start == .busy, stop == .rejected else {
            wedgedCycles = 0
            return .fine
        }
        wedgedCycles += 1
        guard wedgedCycles >= Self.cyclesBeforePowerCycle else { return .wedged }
        wedgedCycles = 0
        return .powerCycle
    }
}
