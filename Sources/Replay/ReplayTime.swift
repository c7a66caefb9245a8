import BLE
import Bridge
import Synchronization
import UCI
import StreamIO
import UCIHost

/// The replayed clock: the timestamp of whatever is being delivered.
final class ReplayTime: TimeSource {
    private let now = Atomic<Int64>(0)
    func set(milliseconds: Int64) { now.store(milliseconds, ordering: .releasing) }
    func nowMilliseconds() -> Int64 { now.load(ordering: .acquiring) }
}
