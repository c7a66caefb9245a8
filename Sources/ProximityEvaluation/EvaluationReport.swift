import Bridge
import Foundation
import Proximity
import Simulation

/// The evaluator's findings, rendered as the Markdown docs/PROXIMITY.md records.
package struct EvaluationReport: Sendable {
    package var seed: UInt64
    package var scale: Double
    package var quality: [QualityFigures]
    package var handshake: [HandshakeEvaluation.Figures]
    package var handshakeSetup: String

    package init(
        seed: UInt64, scale: Double, quality: [QualityFigures], handshake: [HandshakeEvaluation.Figures], handshakeSetup: String
    ) {
        self.seed = seed
        self.scale = scale
        self.quality = quality
        self.handshake = handshake
        self.handshakeSetup = handshakeSetup
    }

    /// Runs everything: the trace evaluation for each radio setup, and the handshake at each link
    /// loss on boards that report RSSI, and without loss on UCI 1.1 boards (no RSSI).
    package static func run(
        seed: UInt64, scale: Double, linkLosses: [Double] = [0, 0.2, 0.5], config: ProximityConfig = .default,
        setups: [RadioSetup] = RadioSetup.all
    ) async throws -> EvaluationReport {
        let quality = setups.map { setup in
            QualityEvaluation.run(setup: setup, config: config, scale: QualityEvaluation.Scale.full.scaled(by: scale), seed: seed)
        }
        let pairs = 8
        let minutes = (60 * scale).rounded(.up)
        let resultLoss = 0.1
        var handshake: [HandshakeEvaluation.Figures] = []
        let runs = linkLosses.map { ($0, BoardUCI.v2_0) } + (linkLosses.contains(0) ? [(0, .v1_1)] : [])
        for (loss, uci) in runs {
            var bridge = BridgeConfig()
            bridge.proximity = config
            handshake.append(
                try await HandshakeEvaluation.run(
                    pairs: pairs, minutes: minutes, linkLoss: loss, resultLoss: resultLoss, seed: seed, config: bridge, uci: uci))
        }
        return EvaluationReport(
            seed: seed, scale: scale, quality: quality, handshake: handshake,
            handshakeSetup: "\(pairs) pairs × \(Int(minutes)) min, the realistic radio, uncalibrated boards, "
                + "controlee misses \(percent(resultLoss, digits: 0)) of results")
    }

    /// The targets of issue 29, for one targeted row.
    static func targets(for q: QualityFigures) -> [Target] {
        func target(_ name: String, _ measured: String, _ met: Bool) -> Target {
            Target(setup: q.setup, name: name, measured: measured, met: met)
        }
        let recallTarget = q.reportsRSSI ? 0.99 : 0.98
        let far = q.handOverBumpShare(20..<100)
        let close = q.handOverBumpShare(15..<20)
        return [
            target("bump recall ≥ 99 % with RSSI, ≥ 98 % without", Self.percent(q.recall), q.recall >= recallTarget),
            target("more than one bump per gesture: 0", "\(q.doubleBumps)", q.doubleBumps == 0),
            target(
                "decision median ≤ 60 ms after contact", q.medianLatency.map(Self.milliseconds) ?? "none",
                (q.medianLatency ?? .infinity) <= 0.060),
            target(
                "decision p95 ≤ 300 ms after contact", q.p95Latency.map(Self.milliseconds) ?? "none",
                (q.p95Latency ?? .infinity) <= 0.300),
            target("no decision more than 15 cm apart", "\(q.farContacts)", q.farContacts == 0),
            target("≤ 0.5 % decided 10–15 cm apart", "\(Self.percent(q.earlyShare)) (\(q.earlyContacts))", q.earlyShare <= 0.005),
            target("hand-overs ≥ 20 cm: ≤ 1 % bump", "\(Self.percent(far.share)) (\(far.bumped)/\(far.count))", far.share <= 0.01),
            target("hand-overs 15–20 cm: ≤ 5 % bump", "\(Self.percent(close.share)) (\(close.bumped)/\(close.count))", close.share <= 0.05),
            target(
                "false bumps ≤ 1 per 100 peer-hours", Self.fixed(q.falseBumpsPer100PeerHours, 2), q.falseBumpsPer100PeerHours <= 1),
            target("≤ 1 near/far flap per peer-hour", Self.fixed(q.flapsPerPeerHour, 3), q.flapsPerPeerHour <= 1),
        ]
    }

    package var targets: [Target] {
        var targets: [Target] = []
        for q in quality where q.targeted { targets += Self.targets(for: q) }
        for h in handshake {
            let boards = Self.boards(h.uci)
            if h.linkLoss == 0 {
                targets.append(
                    Target(
                        setup: nil, name: "bump event median ≤ 200 ms after contact, handshake included (\(boards))",
                        measured: h.medianLatency.map(Self.milliseconds) ?? "none", met: (h.medianLatency ?? .infinity) <= 0.200))
            }
            targets.append(
                Target(
                    setup: nil, name: "one-sided bumps with \(Self.percent(h.linkLoss, digits: 0)) of messages lost (\(boards)): 0",
                    measured: "\(h.oneSided + h.repeated)", met: h.oneSided + h.repeated == 0))
        }
        return targets
    }

    static func boards(_ uci: BoardUCI) -> String {
        uci == .v1_1 ? "UCI 1.1 boards, no RSSI" : "UCI 2.0 boards, RSSI"
    }

    package var allTargetsMet: Bool { targets.allSatisfy(\.met) }

    package var markdown: String {
        let bins = [10, 15, 20, 25, 30]
        var out = "Seed \(seed), scale \(scale). Ranging every 100 ms; the radios are described in \"Radio model\".\n\n"
        out += "| board and correction | bump recall | more than one bump | decision after touch, median / p95 "
        out += "| after reaching 8 cm, median / p95 | decided 10–15 cm apart | decided > 15 cm apart (farthest) "
        out += "| false bumps per 100 peer-h (never < 30 cm) | … standing at exactly 30 cm "
        out += bins.map { "| hand-overs \($0)–\($0 == 30 ? 40 : $0 + 5) cm " }.joined()
        out += "| near/far flaps per peer-h (threshold, near zone) | filter error p95 / p99.9 (moving) |\n"
        out += "|---|---|---|---|---|---|---|---|---|" + bins.map { _ in "---|" }.joined() + "---|---|\n"
        for q in quality {
            var cells = [
                q.setup,
                "\(Self.percent(q.recall)) (\(q.detected)/\(q.gestures))",
                "\(q.doubleBumps)",
                "\(q.medianLatency.map(Self.milliseconds) ?? "–") / \(q.p95Latency.map(Self.milliseconds) ?? "–")",
                "\(q.medianLatencyFromThreshold.map(Self.milliseconds) ?? "–") / \(q.p95LatencyFromThreshold.map(Self.milliseconds) ?? "–")",
                "\(Self.percent(q.earlyShare)) (\(q.earlyContacts))",
                "\(q.farContacts) (\(Self.centimetres(q.farthestDecision)))",
                "\(Self.fixed(q.falseBumpsPer100PeerHours, 2)) (\(q.clearFalseBumps) in \(Int(q.clearPeerHours.rounded())) h)",
                "\(Self.fixed(q.atClearanceFalseBumpsPer100PeerHours, 2)) (\(q.atClearanceFalseBumps) in \(Int(q.atClearanceHours.rounded())) h)",
            ]
            for bin in bins {
                let share = q.handOverBumpShare(bin..<(bin == 30 ? 40 : bin + 5))
                cells.append("\(Self.percent(share.share, digits: 1)) (\(share.bumped)/\(share.count))")
            }
            cells += [
                "\(Self.fixed(q.flapsPerPeerHour, 3)) (\(q.boundaryFlaps) + \(q.nearZoneFlaps) in \(Int((q.boundaryHours + q.nearZoneHours).rounded())) h)",
                "\(q.movingErrorP95.map(Self.centimetres) ?? "–") / \(q.movingErrorP999.map(Self.centimetres) ?? "–")",
            ]
            out += "| " + cells.joined(separator: " | ") + " |\n"
        }
        out += "\nTwo-sided agreement: the real peer handshake over the lossy virtual air (\(handshakeSetup)).\n\n"
        out += "| boards | messages lost | gestures | bump on both sides | on neither | on one side only | more than one | agreement "
        out += "| bump event after touch, median |\n"
        out += "|---|---|---|---|---|---|---|---|---|\n"
        for h in handshake {
            let cells = [
                Self.boards(h.uci), Self.percent(h.linkLoss, digits: 0), "\(h.gestures)", "\(h.bothSides)", "\(h.neither)",
                "\(h.oneSided)", "\(h.repeated)", Self.percent(h.agreement), h.medianLatency.map(Self.milliseconds) ?? "–",
            ]
            out += "| " + cells.joined(separator: " | ") + " |\n"
        }
        out += "\nTargets (issue 29), for every targeted row:\n\n"
        let rowTargets = targets.filter { $0.setup != nil }
        let names = rowTargets.map(\.name).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let rows = rowTargets.compactMap(\.setup).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        if !rows.isEmpty {
            out += "| target | " + rows.joined(separator: " | ") + " |\n"
            out += "|---|" + rows.map { _ in "---|" }.joined() + "\n"
            for name in names {
                let cells = rows.map { row in
                    rowTargets.first { $0.setup == row && $0.name == name }.map { "\($0.measured)\($0.met ? "" : " **NOT MET**")" } ?? "–"
                }
                out += "| \(name) | " + cells.joined(separator: " | ") + " |\n"
            }
            out += "\n"
        }
        for target in targets where target.setup == nil {
            out += "- \(target.name): \(target.measured) — \(target.met ? "met" : "NOT MET")\n"
        }
        let missed = targets.filter { !$0.met }.count
        out += "\n\(missed == 0 ? "Every target met." : "\(missed) of \(targets.count) targets not met.")\n"
        return out
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    static func percent(_ value: Double, digits: Int = 2) -> String { fixed(100 * value, digits) + " %" }
    static func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }
    static func centimetres(_ metres: Double) -> String { "\(Int((metres * 100).rounded())) cm" }
}
