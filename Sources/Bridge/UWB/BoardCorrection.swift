import Proximity
import Synchronization
import UCI

/// The USB serial number in a transport's description ("usb:… serial X"), if it has one.
func usbSerial(inTransport description: String) -> String? {
    guard let range = description.range(of: " serial "), !description[range.upperBound...].isEmpty else { return nil }
    return String(description[range.upperBound...].prefix { $0 != " " })
}

/// The correction in force for the board the node has now: set at each bring-up (the board may
/// have been swapped during a replug), read by the node core once per batch of ranges.
final class BoardCorrection: Sendable {
    private let current: Mutex<RangeCorrection>

    init(_ initial: RangeCorrection) {
        current = Mutex(initial)
    }

    var correction: RangeCorrection {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}
