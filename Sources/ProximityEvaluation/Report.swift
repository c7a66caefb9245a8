import Bridge
import Foundation
import Proximity

/// One quality target of issue 5 and whether a run met it.
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

    /// Sigma the targets refer to.
    package static let targetSigma = 0.10

    /// The radios evaluated: (σ of the radio, σ the engine is configured with). The last row shows
    /// a noisy radio configured as such.
    package static let radios: [(sigma: Double, configured: Double)] = [(0.05, 0.10), (0.10, 0.10), (0.20, 0.10), (0.20, 0.20)]

    /// Runs everything: the trace evaluation for each radio and the handshake at each link loss.
    package static func run(
        seed: UInt64, scale: Double, linkLosses: [Double] = [0, 0.2, 0.5], config: ProximityConfig = .default
    ) async throws -> EvaluationReport {
        let quality = radios.map { radio in
            var configured = config
            configured.rangingSigmaMetres = radio.configured
            return QualityEvaluation.run(
                sigma: radio.sigma, config: configured, scale: QualityEvaluation.Scale.full.scaled(by: scale), seed: seed)
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
                    pairs: pairs, minutes: minutes, linkLoss: loss, resultLoss: resultLoss, sigma: targetSigma, seed: seed,
                    config: bridge))
        }
        return EvaluationReport(
            seed: seed, scale: scale, quality: quality, handshake: handshake,
            handshakeSetup: "\(pairs) pairs × \(Int(minutes)) min, σ \(centimetres(targetSigma)), "
                + "controlee misses \(percent(resultLoss, digits: 0)) of results")
    }

    package var targets: [Target] {
        var targets: [Target] = []
        if let q = quality.first(where: { $0.sigma == Self.targetSigma && $0.configuredSigma == Self.targetSigma }) {
            targets.append(Target(name: "bump recall ≥ 99 %", measured: Self.percent(q.recall), met: q.recall >= 0.99))
            targets.append(
                Target(
                    name: "false bumps ≤ 1 per 100 peer-hours (never closer than 30 cm)",
                    measured: Self.fixed(q.falseBumpsPer100PeerHours, 2), met: q.falseBumpsPer100PeerHours <= 1))
            targets.append(
                Target(
                    name: "median bump latency ≤ one ranging interval (100 ms) after touch",
                    measured: q.medianLatency.map(Self.milliseconds) ?? "none", met: (q.medianLatency ?? .infinity) <= 0.100))
            targets.append(
                Target(
                    name: "≤ 1 near/far flap per peer-hour standing still at a threshold",
                    measured: Self.fixed(q.flapsPerPeerHour, 3), met: q.flapsPerPeerHour <= 1))
        }
        for h in handshake where h.linkLoss > 0 {
            targets.append(
                Target(
                    name: "100 % two-sided agreement with \(Self.percent(h.linkLoss, digits: 0)) of messages lost",
                    measured: Self.percent(h.agreement), met: h.bothSides + h.neither == h.gestures))
        }
        return targets
    }

    package var allTargetsMet: Bool { targets.allSatisfy(\.met) }

    package var markdown: String {
        var out = "Seed \(seed), scale \(scale). Ranging every 100 ms; NLoS 5 % of rounds (+0.2–0.6 m), "
        out += "outliers 1 % (+0.5–3 m), dropouts 10 %, contact bias −3 cm within 15 cm.\n\n"
        out += "| σ (configured) | bump recall | more than one bump | latency after touch, median / p95 "
        out += "| after reaching 8 cm, median / p95 | false bumps per 100 peer-h (never < 30 cm) "
        out += "| … standing at exactly 30 cm | hand-overs at 20–30 cm with a bump "
        out += "| near/far flaps per peer-h at a threshold | filter error p95 / p99.9 (moving) |\n"
        out += "|---|---|---|---|---|---|---|---|---|---|\n"
        for q in quality {
            let cells = [
                "\(Self.centimetres(q.sigma)) (\(Self.centimetres(q.configuredSigma)))",
                "\(Self.percent(q.recall)) (\(q.detected)/\(q.gestures))",
                "\(q.doubleBumps)",
                "\(q.medianLatency.map(Self.milliseconds) ?? "–") / \(q.p95Latency.map(Self.milliseconds) ?? "–")",
                "\(q.medianLatencyFromThreshold.map(Self.milliseconds) ?? "–") / \(q.p95LatencyFromThreshold.map(Self.milliseconds) ?? "–")",
                "\(Self.fixed(q.falseBumpsPer100PeerHours, 2)) (\(q.clearFalseBumps) in \(Int(q.clearPeerHours.rounded())) h)",
                "\(Self.fixed(q.atClearanceFalseBumpsPer100PeerHours, 2)) (\(q.atClearanceFalseBumps) in \(Int(q.atClearanceHours.rounded())) h)",
                "\(Self.percent(Double(q.closeHandOverBumps) / Double(max(q.closeHandOvers, 1)))) (\(q.closeHandOverBumps)/\(q.closeHandOvers))",
                "\(Self.fixed(q.flapsPerPeerHour, 3)) (\(q.boundaryFlaps) in \(Int(q.boundaryHours.rounded())) h)",
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
        out += "\nTargets (σ = \(Self.centimetres(Self.targetSigma))):\n\n"
        for target in targets { out += "- \(target.name): \(target.measured) — \(target.met ? "met" : "NOT MET")\n" }
        return out
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    static func percent(_ value: Double, digits: Int = 2) -> String { fixed(100 * value, digits) + " %" }
    static func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }
    static func centimetres(_ metres: Double) -> String { "\(Int((metres * 100).rounded())) cm" }
}
