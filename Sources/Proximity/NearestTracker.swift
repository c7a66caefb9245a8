
/// Follows the single closest peer across all peers (NearCatch-style "getting warmer"); the
/// bridge reports when `current` names another peer or another band.
///
/// Both have hysteresis: a band changes only once the distance is `bandHysteresis` beyond its
/// edge, and another peer takes over only when it is `nearestSwitchMetres` closer (or the
/// current one has no estimate any more: lost, out of range, silent for `maxGap`).
///
/// Peers are their 64-bit ids, not a generic parameter: this runs for every range of every peer,
/// and the generic version ran unspecialised in the bridge (its `@inlinable` notwithstanding), so
/// that looking up type metadata and tuple witnesses took most of its time: 13 % of the node
/// loop's CPU per notification (docs/PERFORMANCE.md, 2026-11-29).
package struct NearestTracker: Sendable {
    package typealias Peer = UInt64

    package struct Nearest: Sendable, Equatable {
        package var peer: Peer
        package var distance: Double
        package var band: DistanceBand

        init(peer: Peer, distance: Double, band: DistanceBand) {
            self.peer = peer
            self.distance = distance
            self.band = band
        }
    }

    let config: ProximityConfig
    /// Each peer's last estimate; one older than `maxGap` counts as none, and is dropped at the
    /// next scan.
    var latest: [Peer: (distance: Double, time: Int64)] = [:]
    /// The closest current estimate (ties go to the lower peer): kept between refreshes, so a
    /// range that does not concern it costs one comparison instead of a pass over every peer.
    var closest: (peer: Peer, distance: Double, time: Int64)?
    var nearest: Nearest?
    /// The nearest peer now; nil when no peer has an estimate.
    package var current: Nearest? { nearest }

    package init(config: ProximityConfig = .default) {
        self.config = config
    }

    /// A peer's filtered distance at `time` (nil: it has no estimate).
    package mutating func update(peer: Peer, distance: Double?, time: Int64) {
        latest[peer] = distance.map { ($0, time) }
        refresh(now: time, changed: peer)
    }

    /// The peer is gone (lost).
    package mutating func remove(peer: Peer, now: Int64) {
        latest[peer] = nil
        refresh(now: now, changed: peer)
    }

    /// Drops peers whose last estimate is older than `maxGap` (call it as time passes).
    package mutating func expire(now: Int64) {
        refresh(now: now, changed: nil)
    }

    /// Runs on every range of every peer. Only `changed`'s estimate moved since the last
    /// refresh, so the closest one is still known unless it was `changed`'s own or went stale;
    /// then (and on `expire`) one pass over the peers finds it and drops stale estimates.
    mutating func refresh(now: Int64, changed: Peer?) {
        if let changed, let known = closest, known.peer != changed, isCurrent(known.time, now: now) {
            if let entry = latest[changed], Self.precedes(entry.distance, changed, known.distance, known.peer) {
                closest = (changed, entry.distance, entry.time)
            }
        } else {
            scan(now: now)
        }
        var next: Nearest?
        if let current = nearest, let mine = latest[current.peer], isCurrent(mine.time, now: now) {
            if let closest, closest.peer != current.peer, closest.distance < mine.distance - config.nearestSwitchMetres {
                next = Nearest(peer: closest.peer, distance: closest.distance, band: band(of: closest.distance, was: nil))
            } else {
                next = Nearest(peer: current.peer, distance: mine.distance, band: band(of: mine.distance, was: current.band))
            }
        } else if let closest {
            next = Nearest(peer: closest.peer, distance: closest.distance, band: band(of: closest.distance, was: nil))
        }
        nearest = next
    }

    /// Finds the closest current estimate and drops the stale ones; allocates nothing unless an
    /// estimate went stale.
    mutating func scan(now: Int64) {
        closest = nil
        var stale: [Peer] = []
        for (peer, entry) in latest {
            guard isCurrent(entry.time, now: now) else {
                stale.append(peer)
                continue
            }
            if let best = closest, !Self.precedes(entry.distance, peer, best.distance, best.peer) { continue }
            closest = (peer, entry.distance, entry.time)
        }
        for peer in stale { latest[peer] = nil }
    }

    func isCurrent(_ time: Int64, now: Int64) -> Bool {
        now - time <= config.maxGapMilliseconds
    }

    /// Closer, or as close and the lower peer: one order, whichever way the peers were visited.
    static func precedes(_ distance: Double, _ peer: Peer, _ other: Double, _ otherPeer: Peer) -> Bool {
        distance < other || (distance == other && peer < otherPeer)
    }

    func band(of distance: Double, was previous: DistanceBand?) -> DistanceBand {
        let edges = [config.clearMetres, config.nearMetres, config.mediumMetres]
        func plain(_ d: Double) -> DistanceBand {
            DistanceBand.allCases[edges.firstIndex { d <= $0 } ?? edges.count]
        }
        guard let previous else { return plain(distance) }
        let index = DistanceBand.allCases.firstIndex(of: previous)!
        let lower = index > 0 ? edges[index - 1] * (1 - config.bandHysteresis) : -Double.infinity
        let upper = index < edges.count ? edges[index] * (1 + config.bandHysteresis) : Double.infinity
        return (lower...upper).contains(distance) ? previous : plain(distance)
    }
}
