import Bridge
import Events
import Foundation
import Logging
import Simulation

/// Two-sided agreement: pairs of full bridges (the real `NodeCore` handshake, UCI to a virtual
/// board, messages on the virtual air) bump again and again while the air loses messages.
///
/// Each pair is a rig standing still and a peer doing approach-and-bump gestures in front of it
/// (the trace generator's, one after another); pairs stand 100 m apart so they never hear each
/// other, or at booths of one hall where every rig hears every other (`Placement`). Every
/// gesture is scored by the `bump` events both sides wrote during it: agreement means both wrote
/// exactly one, with the same bump id, or neither wrote any.
package enum HandshakeEvaluation {
    package enum Placement: Sendable {
        /// Pairs 100 m apart: nothing but the pair on the air.
        case apart
        /// Pairs at booths on a grid filling a 30 × 20 m hall, on one channel, sharing the
        /// event's key as an event's rigs do (v2 links, which can agree on round hopping):
        /// every rig hears and may range every other (docs/PROXIMITY.md, "Shared air").
        case hall

        /// Where pair `pair` of `pairs` stands; its peer moves along x from there.
        func booth(_ pair: Int, of pairs: Int) -> (x: Double, y: Double) {
            switch self {
            case .apart: return (0, 100 * Double(pair))
            case .hall:
                let columns = max(1, Int((Double(pairs) * 1.5).squareRoot().rounded(.up)))
                let rows = max(1, (pairs + columns - 1) / columns)
                return ((Double(pair % columns) + 0.3) * 30 / Double(columns), (Double(pair / columns) + 0.5) * 20 / Double(rows))
            }
        }
    }

    package struct Figures: Sendable {
        package var linkLoss: Double
        /// The boards' UCI generation: 2.0 boards report RSSI, 1.1 boards none.
        package var uci: BoardUCI
        package var gestures = 0
        package var bothSides = 0
        package var neither = 0
        /// Disagreements: a bump on one side only, or more than one bump in a gesture.
        package var oneSided = 0
        package var repeated = 0
        /// Seconds from touch to each side's `bump` event.
        package var latencies: [Double] = []
        /// Bumps between rigs of different pairs, which never touch.
        package var falseBumps = 0
        /// The shared air over the run (rounds, rounds it lost, frame time per channel), and how
        /// long the run was.
        package var air = SharedAirStatistics()
        package var seconds = 0.0
        /// Seconds from the start (every pair is at its booth from the first second) until each
        /// side's `peer.found` of its partner, and how many sides never found theirs.
        package var discoveries: [Double] = []
        package var neverFound = 0
        /// Pairs none of whose gestures both sides bumped: a rig starved of its nearest peer.
        package var pairsWithoutBump = 0
        /// Channel 9's frame time per second of the run: past 1 frames overlapped.
        package var airLoad: Double { (air.busyMicroseconds[9] ?? 0) / 1e6 / max(seconds, 1) }

        package var agreement: Double { Double(bothSides + neither) / Double(max(gestures, 1)) }
        package var medianLatency: Double? { QualityFigures.percentile(latencies, 0.5) }
    }

    package static func run(
        pairs: Int, minutes: Double, linkLoss: Double, resultLoss: Double, seed: UInt64,
        config: BridgeConfig = BridgeConfig(), radio: RadioModel = RadioModel(), uci: BoardUCI = .v2_0,
        placement: Placement = .apart
    ) async throws -> Figures {
        var radio = radio
        radio.linkLossProbability = linkLoss
        radio.resultLossProbability = resultLoss
        var generator = TraceGenerator(
            seed: seed, bumpMetres: config.proximity.bumpMetres, clearMetres: config.proximity.clearMetres,
            nearMetres: config.proximity.nearMetres, farMetres: config.proximity.farMetres)
        generator.leadSeconds = 2...5

        var nodes: [Scenario.Node] = []
        var gestures: [(pair: Int, window: Range<Double>, touch: Double)] = []
        var end = 0.0
        for pair in 0..<pairs {
            let (x, y) = placement.booth(pair, of: pairs)
            // Three seconds to find each other and start ranging, then gestures one after another,
            // with two seconds to walk from where one ends to where the next begins.
            var path = [Scenario.Waypoint(t: 0, x: x + 1.5, y: y)]
            var t = 3.0
            while t < minutes * 60 {
                let trace = generator.approachAndBump()
                for point in trace.path { path.append(.init(t: t + point.t, x: x + point.d, y: y)) }
                let next = t + trace.duration + 2
                for contact in trace.contacts { gestures.append((pair, t..<next, t + contact.touch)) }
                t = next
            }
            end = max(end, t)
            var rig = Scenario.Node(name: "rig\(pair)", path: [.init(t: 0, x: x, y: y)])
            var peer = Scenario.Node(name: "peer\(pair)", path: path)
            (rig.uci, peer.uci) = (uci, uci)
            nodes += [rig, peer]
        }
        // Run on until every drop of the last gestures has ended on both sides.
        let drain = 5 * Double(config.exchangeTimeoutMilliseconds) / 1000
        var scenario = Scenario(name: "handshake", duration: end + drain, group: 1, radio: radio, nodes: nodes)
        if case .hall = placement { scenario.groupKey = Scenario.keyFromSeed }

        let output = CollectedEvents()
        var options = SimulationDriver.Options()
        options.seed = seed
        options.speed = nil
        options.bridge = config
        var logger = Logger(label: "handshake-evaluation")
        logger.logLevel = .critical
        let driver = SimulationDriver(
            scenario: scenario, options: options, events: EventStream(output: output, includesRanges: false), logger: logger)
        let ids = driver.identities.mapValues(\.peerID.description)
        try await driver.run()

        // For each pair and side, when each bump id was reported (seconds), and when it first
        // found the other.
        var reports: [String: [Int: [Double]]] = [:]
        var found: [String: Double] = [:]
        for line in output.lines {
            guard let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if event["type"] as? String == "peer.found", let node = event["node"] as? String, let peer = event["peer"] as? String,
                let ts = event["ts"] as? String, let time = secondsSinceEpoch(ts), found["\(node)>\(peer)"] == nil
            {
                found["\(node)>\(peer)"] = time
            }
            guard event["type"] as? String == "bump", let node = event["node"] as? String, let peer = event["peer"] as? String,
                let id = event["bump_id"] as? Int, let ts = event["ts"] as? String, let time = secondsSinceEpoch(ts)
            else { continue }
            reports["\(node)>\(peer)", default: [:]][id, default: []].append(time)
        }
        var figures = Figures(linkLoss: linkLoss, uci: uci)
        figures.air = driver.world.sharedAirStatistics
        figures.seconds = scenario.duration
        var partners: Set<String> = []
        for pair in 0..<pairs {
            if let rig = ids["rig\(pair)"], let peer = ids["peer\(pair)"] { partners.formUnion(["\(rig)>\(peer)", "\(peer)>\(rig)"]) }
        }
        for side in partners.sorted() {
            if let time = found[side] { figures.discoveries.append(time) } else { figures.neverFound += 1 }
        }
        figures.falseBumps = reports.filter { !partners.contains($0.key) }.values.reduce(0) { $0 + $1.count }
        var bumpedPairs: Set<Int> = []
        for gesture in gestures {
            guard let rig = ids["rig\(gesture.pair)"], let peer = ids["peer\(gesture.pair)"] else { continue }
            let rigSide = reports["\(rig)>\(peer)", default: [:]]
            let peerSide = reports["\(peer)>\(rig)", default: [:]]
            // A drop belongs to the gesture during which either side first reported it (the other
            // side may report it a little later, after the gesture, if messages were lost).
            let drops = Set(rigSide.keys).union(peerSide.keys).filter { id in
                let first = ((rigSide[id] ?? []) + (peerSide[id] ?? [])).min()!
                return gesture.window.contains(first)
            }
            figures.gestures += 1
            if drops.isEmpty {
                figures.neither += 1
            } else if drops.count > 1 || drops.contains(where: { (rigSide[$0]?.count ?? 0) > 1 || (peerSide[$0]?.count ?? 0) > 1 }) {
                figures.repeated += 1
            } else if let id = drops.first, let a = rigSide[id]?.first, let b = peerSide[id]?.first {
                figures.bothSides += 1
                bumpedPairs.insert(gesture.pair)
                figures.latencies += [a - gesture.touch, b - gesture.touch]
            } else {
                figures.oneSided += 1
            }
        }
        figures.pairsWithoutBump = Set(gestures.map(\.pair)).subtracting(bumpedPairs).count
        return figures
    }

    /// Seconds since the Unix epoch of an event's `ts` (runs here start at the epoch, so only the
    /// day of January 1970 and the time matter).
    static func secondsSinceEpoch(_ ts: String) -> Double? {
        let fields = ts.split(whereSeparator: { "-T:Z".contains($0) }).compactMap { Double($0) }
        guard fields.count == 6, fields[0] == 1970, fields[1] == 1 else { return nil }
        return (fields[2] - 1) * 86_400 + fields[3] * 3_600 + fields[4] * 60 + fields[5]
    }
}
