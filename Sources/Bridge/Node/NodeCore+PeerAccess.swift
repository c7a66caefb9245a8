import PeerProtocol

/// How the core reaches a peer's entry.
extension NodeCore {
    /// Reads or changes `id`'s entry where it lies in `peers`. `peers[id]?.field` copies the whole
    /// `Peer` to read one field (every reference in it retained, then released) and moves it out
    /// and back to write one; on the node's path that was every peer at every tick and every range
    /// notification's air count (2026-12-02, a 10-rig hall: a tenth of the CPU in such copies and
    /// moves).
    @discardableResult
    mutating func inPlace<Result>(_ id: PeerID, _ body: (inout Peer) -> Result) -> Result? {
        guard let index = peers.index(forKey: id) else { return nil }
        return inPlace(at: index, body)
    }

    /// The same at an index of `peers`: a read through `peers.values[index]` copies the entry too.
    @discardableResult
    mutating func inPlace<Result>(at index: [PeerID: Peer].Index, _ body: (inout Peer) -> Result) -> Result {
        body(&peers.values[index])
    }

    /// The peers holding one of the radio's ranging sessions, with the one-to-many place each has
    /// as our controlee. Walks `peers` by index: iterating the dictionary copies each entry, and
    /// holding its `keys` or `indices` while an entry is changed in place would copy the whole
    /// dictionary.
    mutating func grantedPeers() -> [(peer: PeerID, sharedPlace: UInt32?)] {
        var granted: [(peer: PeerID, sharedPlace: UInt32?)] = []
        var index = peers.startIndex
        while index != peers.endIndex {
            if let place = inPlace(at: index, { $0.granted ? .some($0.sharedPlace) : nil }) { granted.append((peers.keys[index], place)) }
            peers.formIndex(after: &index)
        }
        return granted
    }

    /// What the peers holding one of the radio's ranging sessions need of it.
    mutating func grantedDemand() -> RangingScheduler.Demand {
        var demand = RangingScheduler.Demand()
        for (peer, place) in grantedPeers() { demand.add(sharing: sharesSession(peer), place: place) }
        return demand
    }

    /// Whether `id` is a peer, without copying its entry (`peers[id] != nil` would).
    func knows(_ id: PeerID) -> Bool { peers.index(forKey: id) != nil }
}
