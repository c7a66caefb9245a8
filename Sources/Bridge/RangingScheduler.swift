import PeerProtocol

/// Decides which peers get one of the radio's ranging sessions when there are more peers than
/// sessions. Pure and deterministic: the same facts give the same choice, so seeded simulations
/// stay reproducible.
///
/// Order of claim, strongest first:
/// 1. peers near or in a profile drop: losing their session would lose the bump;
/// 2. peers whose adverts are strong (`closeRSSI`): the ones who may walk up and bump next. Among
///    them the strongest signal wins, with `stickiness` dB in favour of peers already ranging, so
///    someone walking up to the rig displaces someone standing a few metres away, but two people
///    at the same distance do not take turns every few seconds;
/// 3. everyone else: a peer keeps its session for one turn (`turnMilliseconds`); after that,
///    whoever has waited longest goes first (fair rotation), then the stronger signal.
/// Ties go to the lower peer id. Peers that asked to be left alone for a while (`busy`) are not
/// candidates until then, nor, while the air is full (`shedsFarPeers`), are those of the third tier.
struct RangingScheduler: Sendable {
    struct Candidate: Sendable, Equatable {
        var peer: PeerID
        var granted: Bool
        /// Granted: when the grant started. Waiting: since when (the last grant ended, or the peer
        /// appeared).
        var since: Int64
        /// Near, or in a profile drop.
        var holdsPriority: Bool
        /// Smoothed advert RSSI, dBm; nil before any advert.
        var rssi: Double?
        /// False while the peer (or we) said `busy` and its retry time has not come.
        var available: Bool
        /// We control this peer and put it in a one-to-many session with others.
        var sharesSession = false
        /// The one-to-many session it has a place in, once it has one.
        var sharedSession: UInt32? = nil
    }

    /// The radio sessions a set of peers takes. Peers with a place count the sessions those places
    /// are in, however empty: a session left half-empty by peers who went away is still a whole
    /// session on the radio. Sharing peers without a place fill free places first (as
    /// `SharedSessions.reserve` does), then new sessions.
    struct Demand: Equatable {
        var own = 0
        /// Peers with a place, by one-to-many session.
        var placed: [UInt32: Int] = [:]
        var unplaced = 0

        init() {}

        init(_ candidates: some Sequence<Candidate>) {
            for candidate in candidates { add(candidate) }
        }

        mutating func add(_ candidate: Candidate) {
            add(sharing: candidate.sharesSession, place: candidate.sharedSession)
        }

        mutating func add(sharing: Bool, place: UInt32?) {
            if !sharing {
                own += 1
            } else if let place {
                placed[place, default: 0] += 1
            } else {
                unplaced += 1
            }
        }
    }

    var budget: Int
    /// The air is full (`AirLoad`): peers of the third tier (neither near nor strong) get no
    /// session, and those that hold one lose it.
    var shedsFarPeers = false
    /// Peers that fit in one shared (one-to-many) session; see `BridgeConfig.controleesPerSession`.
    var controleesPerSession = 1
    var turnMilliseconds: Int64 = 5_000
    var stickiness: Double = 6
    /// Adverts this strong put a peer in the second tier: about 3 m with the log-distance model
    /// of a typical BLE adapter (−59 dBm at 1 m, free space), a few seconds' walk from a bump.
    static let closeRSSI: Double = -69

    /// The peers that should hold a session now: in rank order, as many as the budget's sessions
    /// hold, peers that share sessions counting a fraction of one each.
    func choose(_ candidates: [Candidate], now: Int64) -> Set<PeerID> {
        let eligible = candidates.filter { ($0.granted || $0.available) && !(shedsFarPeers && tier(of: $0) == 2) }
        guard sessionsNeeded(Demand(eligible)) > budget else { return Set(eligible.map(\.peer)) }
        let ranked = eligible.sorted { key($0, now: now) < key($1, now: now) }
        var chosen: Set<PeerID> = []
        var demand = Demand()
        for candidate in ranked {
            var next = demand
            next.add(candidate)
            guard sessionsNeeded(next) <= budget else { continue }
            demand = next
            chosen.insert(candidate.peer)
        }
        return chosen
    }

    /// Sessions the radio runs for `demand`.
    func sessionsNeeded(_ demand: Demand) -> Int {
        let limit = controleesPerSession
        let free = demand.placed.count * limit - demand.placed.values.reduce(0, +)
        return demand.own + demand.placed.count + (max(0, demand.unplaced - free) + limit - 1) / limit
    }

    /// 0: near or in a profile drop; 1: strong adverts; 2: everyone else.
    private func tier(of c: Candidate) -> Int {
        c.holdsPriority ? 0 : (c.rssi ?? -.infinity) >= Self.closeRSSI ? 1 : 2
    }

    private func key(_ c: Candidate, now: Int64) -> RankKey {
        let tier = tier(of: c)
        if tier == 1 {
            let strength = c.rssi! + (c.granted ? stickiness : 0)
            return RankKey(tier: tier, outOfTurn: 0, waitingSince: 0, weakness: -strength, peer: c.peer.rawValue)
        }
        let inTurn = c.granted && now - c.since < turnMilliseconds
        // A peer holding a session has not waited at all: after its turn, everyone waiting goes first.
        let waitingSince = c.granted ? now : c.since
        return RankKey(
            tier: tier, outOfTurn: inTurn ? 0 : 1, waitingSince: waitingSince, weakness: -(c.rssi ?? -200), peer: c.peer.rawValue)
    }

    /// How long a peer told `busy` should wait before trying again: about as long as the peers
    /// ahead of it will take, at least a second and at most half a minute.
    func retryAfter(waiting: Int) -> Int64 {
        let rounds = Int64((waiting + budget - 1) / max(budget, 1))
        return min(30_000, max(1_000, rounds * turnMilliseconds))
    }
}

private struct RankKey: Comparable {
    var tier: Int
    var outOfTurn: Int
    var waitingSince: Int64
    var weakness: Double
    var peer: UInt64

    static func < (a: RankKey, b: RankKey) -> Bool {
        (a.tier, a.outOfTurn, a.waitingSince, a.weakness, a.peer) < (b.tier, b.outOfTurn, b.waitingSince, b.weakness, b.peer)
    }
}
