import Foundation

/// Bluetooth LE's shared air in the world (docs/PROXIMITY.md, "Shared air"): adverts collide with
/// other adverts on the channel the scanner listens on, and a controller holds only so many
/// connections. Pure arithmetic; the world supplies levels and draws.
package struct SharedBLEAir: Sendable, Equatable {
    /// A legacy advertising PDU with a full 31-octet payload at 1 Mb/s: preamble 1, access
    /// address 4, header 2, AdvA 6 + AdvData 31, CRC 3 = 47 octets, 376 µs (Core Spec Vol 6
    /// Part B §2.1). Our adverts, public or private, fill the 31 octets.
    package var pduMicroseconds = 376.0
    /// How often each advertiser sends an advertising event: the bridge asks for 100–150 ms
    /// (`BlueZAdapter.advertisingIntervals`) and the link layer adds 0–10 ms of advDelay to
    /// each event (Vol 6 Part B §4.4.2.2.1); 130 ms is the middle.
    package var advertisingIntervalMilliseconds = 130.0
    /// How much stronger a wanted PDU must be than one that overlaps it: a receiver need only
    /// work at a co-channel C/I of 21 dB (Vol 6 Part A §4.2.2.1), so anything within 21 dB of the
    /// wanted PDU is taken to destroy it. Pessimistic: real receivers capture at a few dB.
    package var captureMargin = 21.0
    /// LE connections one controller holds at once (as central and peripheral together): a
    /// Raspberry Pi 3B+'s built-in controller (CYW43455, as on the Pi 4) completed 8 and
    /// answered the 10th with "Connection Rejected due to Limited Resources" (0x0D)
    /// (dev.classmethod.jp, "Raspberry Pi 3B+ Maximum BLE Connections", 2019).
    package var connectionLimit = 8
    /// How long an initiator waits for a target that does not answer its connection (one at its
    /// limit) before the link layer reports 0x3E, Connection Failed to be Established: six
    /// connection events (Vol 6 Part B §4.5.2) at the kernel's 30-50 ms interval.
    package var establishTimeoutMilliseconds: Int64 = 300

    package init() {}

    /// How many of the adverts a scanner hears at `levels` (dBm, ascending, the wanted one's
    /// among them) can destroy one heard at `level`: those not `captureMargin` below it, itself
    /// excepted.
    package func interferers(of level: Double, amongAscending levels: [Double]) -> Int {
        var (low, high) = (0, levels.count)
        while low < high {
            let middle = (low + high) / 2
            if levels[middle] > level - captureMargin { high = middle } else { low = middle + 1 }
        }
        return max(0, levels.count - low - 1)
    }

    /// The chance that one advertising event reaches the scanner past `interferers` other
    /// advertisers: on the scanner's channel its PDU must overlap none of theirs. Each sends one
    /// PDU per channel per event at independent times (pure ALOHA: a PDU is hit by any other
    /// that starts within one PDU before or after it).
    package func eventSurvives(interferers: Int) -> Double {
        exp(-2 * pduMicroseconds / 1000 * Double(interferers) / advertisingIntervalMilliseconds)
    }

    /// Whether the advert reaches the scanner at least once in a report period of
    /// `periodMilliseconds` (as many events as fit in it), given `draw` uniform in [0, 1).
    package func heard(interferers: Int, periodMilliseconds: Double, draw: Double) -> Bool {
        let events = max(1, periodMilliseconds / advertisingIntervalMilliseconds)
        return draw < 1 - pow(1 - eventSurvives(interferers: interferers), events)
    }
}
