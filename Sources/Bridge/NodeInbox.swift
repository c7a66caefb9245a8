import BLE
import Synchronization
import UCI
import UCIHost

/// Everything a node reacts to, in one ordered queue.
public enum NodeInput: Sendable {
    case uwb(UCIHostEvent)
    /// The UWB board is back (replugged or reconnected) on this transport.
    case uwbReattached(any UCITransport)
    case ble(BLEEvent)
    /// Time passed: timeouts, repeats of unanswered peer messages, the `nearest` report.
    case tick
}

/// The node's single input queue. Producers (the UCI host's reader, the BLE backend, a ticker)
/// post; the node's loop handles one input at a time, so per-node processing is sequential.
///
/// Bounded for the inputs that flood: past `limit` waiting inputs, range notifications and
/// adverts are dropped (and counted), since the next round or advert carries the same news.
/// Everything else (session changes, link traffic, ticks) always queues.
final class NodeInbox: Sendable {
    let inputs: AsyncStream<NodeInput>
    private let continuation: AsyncStream<NodeInput>.Continuation
    private let tracker: WorkTracker?
    private let limit: Int
    private let waiting = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    init(tracker: WorkTracker?, limit: Int) {
        (inputs, continuation) = AsyncStream.makeStream(of: NodeInput.self)
        self.tracker = tracker
        self.limit = limit
    }

    func post(_ input: NodeInput) {
        if input.isSheddable, waiting.load(ordering: .relaxed) >= limit {
            dropped.add(1, ordering: .relaxed)
            return
        }
        tracker?.begin()
        waiting.add(1, ordering: .relaxed)
        if case .terminated = continuation.yield(input) {
            waiting.subtract(1, ordering: .relaxed)
            tracker?.end()
        }
    }

    /// The loop calls this after handling each input.
    func handled() {
        waiting.subtract(1, ordering: .relaxed)
        tracker?.end()
    }

    /// Inputs dropped since the last call.
    func takeDropped() -> Int {
        dropped.exchange(0, ordering: .relaxed)
    }

    func finish() {
        continuation.finish()
    }
}

extension NodeInput {
    /// Inputs whose loss the next one repairs: a ranging round, an advert.
    var isSheddable: Bool {
        switch self {
        case .uwb(.notification(.rangeData)), .ble(.advertisement): true
        default: false
        }
    }
}
