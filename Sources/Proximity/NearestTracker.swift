/// How close the nearest peer is, in words ("getting warmer").
public enum DistanceBand: String, Sendable, CaseIterable {
    /// Within the contact clearance (30 cm by default): about to bump, or handing something over.
    case immediate
    /// Within the near zone's threshold.
    case near
    case medium
    case far
}

/// Follows the single closest peer across all peers (NearCatch-style "getting warmer"); the
/// bridge reports when `current` names another peer or another band.
///
/// Both have hysteresis: a band changes only once the distance is `bandHysteresis` beyond its
/// edge, and another peer takes over only when it is `nearestSwitchMetres` closer (or the
/// current one has no estimate any more: lost, out of range, silent for `maxGap`).
///
/// Inlinable so that the bridge's use (keyed by peer id) is specialised: it runs for every range
/// of every peer, and unspecialised generic code spent most of its time looking up type metadata.
public struct NearestTracker<Peer: Hashable & Comparable & Sendable>: Sendable {
    public struct Nearest: Sendable, Equatable {
        public var peer: Peer
        public var distance: Double
        public var band: DistanceBand

        @inlinable init(peer: Peer, distance: Double, band: DistanceBand) {
            self.peer = peer
            self.distance = distance
            self.band = band
        }
    }

    @usableFromInline let config: ProximityConfig
    @usableFromInline var latest: [Peer: (distance: Double, time: Int64)] = [:]
    @usableFromInline var nearest: Nearest?
    /// The nearest peer now; nil when no peer has an estimate.
    @inlinable public var current: Nearest? { nearest }

    @inlinable public init(config: ProximityConfig = .default) {
        self.config = config
    }

    /// A peer's filtered distance at `time` (nil: it has no estimate).
    @inlinable public mutating func update(peer: Peer, distance: Double?, time: Int64) {
        latest[peer] = distance.map { ($0, time) }
        refresh(now: time)
    }

    /// The peer is gone (lost).
    @inlinable public mutating func remove(peer: Peer, now: Int64) {
        latest[peer] = nil
        refresh(now: now)
    }

    /// Drops peers whose last estimate is older than `maxGap` (call it as time passes).
    @inlinable public mutating func expire(now: Int64) {
        refresh(now: now)
    }

    /// Runs on every range of every peer, so it makes one pass over the peers, allocating
    /// nothing unless an estimate went stale.
    @inlinable mutating func refresh(now: Int64) {
        var closest: (key: Peer, value: (distance: Double, time: Int64))?
        var stale: [Peer] = []
        for entry in latest {
            guard now - entry.value.time <= config.maxGapMilliseconds else {
                stale.append(entry.key)
                continue
            }
            if let best = closest,
                best.value.distance < entry.value.distance || (best.value.distance == entry.value.distance && best.key < entry.key)
            {
                continue
            }
            closest = entry
        }
        for peer in stale { latest[peer] = nil }
        var next: Nearest?
        if let current = nearest, let mine = latest[current.peer] {
            if let closest, closest.key != current.peer, closest.value.distance < mine.distance - config.nearestSwitchMetres {
                next = Nearest(peer: closest.key, distance: closest.value.distance, band: band(of: closest.value.distance, was: nil))
            } else {
                next = Nearest(peer: current.peer, distance: mine.distance, band: band(of: mine.distance, was: current.band))
            }
        } else if let closest {
            next = Nearest(peer: closest.key, distance: closest.value.distance, band: band(of: closest.value.distance, was: nil))
        }
        nearest = next
    }

    @inlinable func band(of distance: Double, was previous: DistanceBand?) -> DistanceBand {
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
