import BLE
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
final class NodeInbox: Sendable {
    let inputs: AsyncStream<NodeInput>
    private let continuation: AsyncStream<NodeInput>.Continuation
    private let tracker: WorkTracker?

    init(tracker: WorkTracker?) {
        (inputs, continuation) = AsyncStream.makeStream(of: NodeInput.self)
        self.tracker = tracker
    }

    func post(_ input: NodeInput) {
        tracker?.begin()
        if case .terminated = continuation.yield(input) { tracker?.end() }
    }

    /// The loop calls this after handling each input.
    func handled() {
        tracker?.end()
    }

    func finish() {
        continuation.finish()
    }
}
