import BLE
import StreamIO
import Synchronization
import UCI
import UCIHost

/// The node's single input queue. Producers (the UCI host's reader, the BLE backend, a ticker)
/// post; the node's loop takes everything waiting at once and handles it in order, so per-node
/// processing is sequential and a busy radio costs one wake-up per batch, not per input.
///
/// Bounded for the inputs that flood: past `limit` waiting inputs, range notifications and
/// adverts are dropped (and counted), since the next round or advert carries the same news.
/// Everything else (session changes, link traffic, ticks) always queues.
final class NodeInbox: Sendable {
    private struct State {
        var queued: [NodeInput] = []
        /// Taken by the loop but not yet handled; counts towards `limit`.
        var inHand = 0
        var dropped = 0
        var finished = false
        /// Unsafe rather than checked: one is made per batch on the range path, and the checked
        /// kind allocates; `next` and `finish` resume it exactly once, under the lock's rules.
        var waiter: UnsafeContinuation<[NodeInput]?, Never>?
        /// The storage of the batch the loop handled last, emptied: the next inputs queue into it,
        /// so a batch costs no allocation.
        var spare: [NodeInput] = []

        mutating func takeQueued() -> [NodeInput] {
            inHand += queued.count
            var taken = spare
            spare = []
            swap(&taken, &queued)
            return taken
        }
    }
    private let state = Mutex(State())
    private let tracker: WorkTracker?
    private let limit: Int

    init(tracker: WorkTracker?, limit: Int) {
        self.tracker = tracker
        self.limit = limit
    }

    func post(_ input: NodeInput) {
        post(CollectionOfOne(input))
    }

    /// Queues `inputs` in order (what one UWB transport read decoded to), dropping the sheddable
    /// ones that find the queue full.
    func post(_ inputs: some Sequence<NodeInput>) {
        let wake = state.withLock { s -> (UnsafeContinuation<[NodeInput]?, Never>, [NodeInput])? in
            guard !s.finished else { return nil }
            var accepted = 0
            for input in inputs {
                if input.isSheddable, s.queued.count + s.inHand >= limit {
                    s.dropped += 1
                    continue
                }
                s.queued.append(input)
                accepted += 1
            }
            guard accepted > 0 else { return nil }
            tracker?.begin(accepted)
            guard let waiter = s.waiter else { return nil }
            s.waiter = nil
            return (waiter, s.takeQueued())
        }
        if let (waiter, batch) = wake { waiter.resume(returning: batch) }
    }

    /// Everything waiting, in order, once there is something; nil after `finish` once empty.
    /// One consumer only (the node's loop), which calls `handled` after each batch.
    func next() async -> [NodeInput]? {
        await withUnsafeContinuation { continuation in
            let ready: [NodeInput]?? = state.withLock { s in
                if !s.queued.isEmpty { return .some(s.takeQueued()) }
                if s.finished { return .some(nil) }
                s.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The loop calls this after handling each batch `next` gave it, handing the batch back.
    func handled(_ batch: consuming [NodeInput]) {
        let count = batch.count
        var storage = consume batch
        storage.removeAll(keepingCapacity: true)
        state.withLock { s in
            s.inHand -= count
            if s.spare.capacity < storage.capacity { swap(&s.spare, &storage) }
        }
        tracker?.end(count)
    }

    /// Inputs dropped since the last call.
    func takeDropped() -> Int {
        state.withLock { s in
            defer { s.dropped = 0 }
            return s.dropped
        }
    }

    /// Ends the loop once it has handled what is queued.
    func finish() {
        let waiter = state.withLock { s in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }
}
