import Logging
import Synchronization
import StreamIO
import Testing
import UCI
@testable import UCIHost

final class Recorder: Sendable {
    private let events = Mutex<[UCIHostEvent]>([])
    func record(_ batch: [UCIHostEvent]) { events.withLock { $0 += batch } }
    var all: [UCIHostEvent] { events.withLock { $0 } }

    func waitFor(count: Int) async {
        while all.count < count { try? await Task.sleep(for: .milliseconds(1)) }
    }
}
