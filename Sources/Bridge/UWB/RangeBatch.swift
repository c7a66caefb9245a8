import PeerProtocol

/// The readings of one range batch (the notifications of one radio read) sorted out by peer:
/// the peers in the order their first reading came, each with its readings in arrival order.
///
/// Why a type: a batch is nearly always one peer's reading, but a board that fell behind hands
/// over hundreds at once, and walking every reading for every peer of such a batch cost the node
/// half its throughput. Here a batch is sorted in one pass over its readings (a counting sort by
/// peer); the storage is kept between batches, so a warm node allocates nothing for it.
struct RangeBatch {
    /// A reading's place in the batch's notifications: `rounds[round].measurements[measurement]`.
    struct Reading {
        var round: Int
        var measurement: Int
    }

    /// The batch's peers, in the order their first reading came.
    private(set) var peers: [PeerID] = []
    private var slots: [PeerID: Int] = [:]
    /// Every reading with its peer's slot, in arrival order.
    private var arrivals: [(slot: Int, reading: Reading)] = []
    /// The readings grouped by slot (arrival order within each), and where each slot's begin.
    private var grouped: [Reading] = []
    private var starts: [Int] = []

    /// Empties the batch, keeping its storage.
    mutating func removeAll() {
        peers.removeAll(keepingCapacity: true)
        slots.removeAll(keepingCapacity: true)
        arrivals.removeAll(keepingCapacity: true)
        grouped.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
    }

    /// Adds `peer`'s next reading.
    mutating func add(_ reading: Reading, of peer: PeerID) {
        let slot: Int
        if let known = slots[peer] {
            slot = known
        } else {
            slot = peers.count
            slots[peer] = slot
            peers.append(peer)
        }
        arrivals.append((slot, reading))
    }

    /// How many readings the batch holds.
    var count: Int { arrivals.count }

    /// Groups the readings by peer; call once, after the last `add`.
    mutating func sort() {
        starts.append(contentsOf: repeatElement(0, count: peers.count + 1))
        for arrival in arrivals { starts[arrival.slot + 1] += 1 }
        for slot in peers.indices { starts[slot + 1] += starts[slot] }
        grouped.append(contentsOf: repeatElement(Reading(round: 0, measurement: 0), count: arrivals.count))
        // Each slot's start serves as its cursor, which leaves it at the next slot's start...
        for arrival in arrivals {
            grouped[starts[arrival.slot]] = arrival.reading
            starts[arrival.slot] += 1
        }
        // ...so shifting them by one slot restores the starts.
        for slot in peers.indices.reversed() { starts[slot] = slot == 0 ? 0 : starts[slot - 1] }
    }

    /// The readings of `peers[slot]`, in arrival order (after `sort`).
    func readings(ofPeerAt slot: Int) -> ArraySlice<Reading> {
        grouped[starts[slot]..<starts[slot + 1]]
    }
}
