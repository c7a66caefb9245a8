import Bridge
import Foundation
import Proximity

/// One quality target (issues 5 and 14) and whether a run met it.
package struct Target: Sendable {
    package var name: String
    package var measured: String
    package var met: Bool
}

/// The evaluator's findings, rendered as the Markdown docs/PROXIMITY.md records.
package struct EvaluationReport: Sendable {
    package var seed: UInt64
    package var scale: Double
    package var quality: [QualityFigures]
    package var handshake: [HandshakeEvaluation.Figures]
    package var handshakeSetup: String

    /// Runs everything: the trace evaluation for each radio setup and the handshake at each link
    /// loss (on the realistic radio).
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
        for loss in linkLosses {
            var bridge = BridgeConfig()
            bridge.proximity = config
            handshake.append(
                try await HandshakeEvaluation.run(
                    pairs: pairs, minutes: minutes, linkLoss: loss, resultLoss: resultLoss, seed: seed, config: bridge))
        }
        return EvaluationReport(
            seed: seed, scale: scale, quality: quality, handshake: handshake,
            handshakeSetup: "\(pairs) pairs × \(Int(minutes)) min, the realistic radio, "
                + "controlee misses \(percent(resultLoss, digits: 0)) of results")
    }

    package var targets: [Target] {
        var targets: [Target] = []
        if let q = quality.first(where: { $0.setup == RadioSetup.realistic.name }) {
            targets.append(Target(name: "bump recall ≥ 99 %", measured: Self.percent(q.recall), met: q.recall >= 0.99))
            targets.append(Target(name: "more than one bump per gesture: 0", measured: "\(q.doubleBumps)", met: q.doubleBumps == 0))
            let far = q.handOverBumpShare(20..<100)
            targets.append(
                Target(
                    name: "hand-overs with closest approach ≥ 20 cm: ≤ 1 % bump",
                    measured: "\(Self.percent(far.share)) (\(far.bumped)/\(far.count))", met: far.share <= 0.01))
            let close = q.handOverBumpShare(15..<20)
            targets.append(
                Target(
                    name: "hand-overs with closest approach 15–20 cm: ≤ 5 % bump",
                    measured: "\(Self.percent(close.share)) (\(close.bumped)/\(close.count))", met: close.share <= 0.05))
            targets.append(
                Target(
                    name: "false bumps ≤ 1 per 100 peer-hours (never closer than 30 cm)",
                    measured: Self.fixed(q.falseBumpsPer100PeerHours, 2), met: q.falseBumpsPer100PeerHours <= 1))
            targets.append(
                Target(
                    name: "≤ 1 near/far flap per peer-hour standing at a threshold or in the near zone, shadowing included",
                    measured: Self.fixed(q.flapsPerPeerHour, 3), met: q.flapsPerPeerHour <= 1))
            targets.append(
                Target(
                    name: "median bump decision ≤ 150 ms after the true distance reaches 8 cm",
                    measured: q.medianLatencyFromThreshold.map(Self.milliseconds) ?? "none",
                    met: (q.medianLatencyFromThreshold ?? .infinity) <= 0.150))
            targets.append(
                Target(
                    name: "no bump decided while the devices are more than 10 cm apart",
                    measured: "\(q.earlyContacts)", met: q.earlyContacts == 0))
        }
        for h in handshake {
            targets.append(
                Target(
                    name: "one-sided bumps with \(Self.percent(h.linkLoss, digits: 0)) of messages lost: 0",
                    measured: "\(h.oneSided + h.repeated)", met: h.oneSided + h.repeated == 0))
        }
        return targets
    }

    package var allTargetsMet: Bool { targets.allSatisfy(\.met) }

    package var markdown: String {
        let bins = [10, 15, 20, 25, 30]
        var out = "Seed \(seed), scale \(scale). Ranging every 100 ms; the radios are described in \"Radio model\".\n\n"
        out += "| radio and correction | bump recall | more than one bump | latency after touch, median / p95 "
        out += "| after reaching 8 cm, median / p95 | decided > 10 cm apart (farthest) | false bumps per 100 peer-h (never < 30 cm) "
        out += "| … standing at exactly 30 cm "
        out += bins.map { "| hand-overs \($0)–\($0 == 30 ? 40 : $0 + 5) cm " }.joined()
        out += "| near/far flaps per peer-h (threshold, near zone) | filter error p95 / p99.9 (moving) |\n"
        out += "|---|---|---|---|---|---|---|---|" + bins.map { _ in "---|" }.joined() + "---|---|\n"
        for q in quality {
            var cells = [
                q.setup,
                "\(Self.percent(q.recall)) (\(q.detected)/\(q.gestures))",
                "\(q.doubleBumps)",
                "\(q.medianLatency.map(Self.milliseconds) ?? "–") / \(q.p95Latency.map(Self.milliseconds) ?? "–")",
                "\(q.medianLatencyFromThreshold.map(Self.milliseconds) ?? "–") / \(q.p95LatencyFromThreshold.map(Self.milliseconds) ?? "–")",
                "\(q.earlyContacts) (\(Self.centimetres(q.farthestDecision)))",
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
        out += "| messages lost | gestures | bump on both sides | on neither | on one side only | more than one | agreement "
        out += "| bump event after touch, median |\n"
        out += "|---|---|---|---|---|---|---|---|\n"
        for h in handshake {
            let cells = [
                Self.percent(h.linkLoss, digits: 0), "\(h.gestures)", "\(h.bothSides)", "\(h.neither)", "\(h.oneSided)",
                "\(h.repeated)", Self.percent(h.agreement), h.medianLatency.map(Self.milliseconds) ?? "–",
            ]
            out += "| " + cells.joined(separator: " | ") + " |\n"
        }
        out += "\nTargets (\(RadioSetup.realistic.name)):\n\n"
        for target in targets { out += "- \(target.name): \(target.measured) — \(target.met ? "met" : "NOT MET")\n" }
        return out
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    static func percent(_ value: Double, digits: Int = 2) -> String { fixed(100 * value, digits) + " %" }
    static func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }
    static func centimetres(_ metres: Double) -> String { "\(Int((metres * 100).rounded())) cm" }
}
