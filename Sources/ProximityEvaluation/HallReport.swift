import Bridge
import Simulation

/// A crowded hall (issue 32): `rigs` full bridges at booths of a 30 × 20 m hall, every second
/// one bumping its booth partner again and again, all on channel 9. Each size runs three times
/// from the same seed: on the shared air with the rig's adaptive scheduling (sessions spread over
/// preamble codes 9-12, rounds hopping, far peers shed when the air is full), with the fixed
/// scheduling it replaced (every session on code 10, no hopping, nothing shed), and on private
/// air (every round its own air: the hall as the world saw it before). The air load is the
/// frames' time on channel 9 per second of the run: past 100 % they cannot all have had the air
/// to themselves. The rigs share the event's key (v2 links). Rendered as the Markdown
/// docs/PROXIMITY.md records.
package struct HallReport: Sendable {
    package enum Air: String, Sendable, CaseIterable {
        case adaptive = "shared, adaptive"
        case fixed = "shared, fixed"
        case ideal = "private"
    }

    package struct Row: Sendable {
        package var rigs: Int
        package var air: Air
        package var figures: HandshakeEvaluation.Figures
        package var sharedAir: Bool { air != .ideal }
    }

    package var seed: UInt64
    package var minutes: Double
    package var rows: [Row]

    package static func run(rigs sizes: [Int], minutes: Double, seed: UInt64) async throws -> HallReport {
        var rows: [Row] = []
        for rigs in sizes {
            for air in Air.allCases {
                var radio = RadioModel()
                radio.sharedAir = air != .ideal
                var config = BridgeConfig()
                config.shedsFarPeersWhenAirIsFull = air == .adaptive
                if air == .fixed {
                    config.uwb.preambleCodes = [10]
                    config.uwb.hopsRounds = false
                }
                let figures = try await HandshakeEvaluation.run(
                    pairs: max(1, rigs / 2), minutes: minutes, linkLoss: 0, resultLoss: 0, seed: seed, config: config, radio: radio,
                    placement: .hall)
                rows.append(Row(rigs: rigs, air: air, figures: figures))
            }
        }
        return HallReport(seed: seed, minutes: minutes, rows: rows)
    }

    package var markdown: String {
        var out = "A hall of 30 × 20 m, every rig on channel 9 (fixed: every session on preamble code 10 without hopping) "
        out += "(seed \(seed), \(EvaluationReport.fixed(minutes, 1)) min of bump gestures per booth).\n\n"
        out += "| rigs | air | gestures | bump recall | one-sided | repeated | false | median latency | p95 latency | rounds | round success | air load | found partner (median / max) | pairs without a bump |\n"
        out += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        for row in rows {
            let f = row.figures
            let recall = Double(f.bothSides) / Double(max(f.gestures, 1))
            let success = f.air.rounds == 0 ? "—" : EvaluationReport.percent(1 - Double(f.air.lostRounds) / Double(f.air.rounds), digits: 1)
            let load = row.sharedAir ? EvaluationReport.percent(f.airLoad, digits: 1) : "—"
            let cells = [
                "\(row.rigs)", row.air.rawValue, "\(f.gestures)", "\(EvaluationReport.percent(recall, digits: 1)) (\(f.bothSides))",
                "\(f.oneSided)", "\(f.repeated)", "\(f.falseBumps)",
                f.medianLatency.map(EvaluationReport.milliseconds) ?? "—",
                QualityFigures.percentile(f.latencies, 0.95).map(EvaluationReport.milliseconds) ?? "—",
                row.sharedAir ? "\(f.air.rounds)" : "—", success, load, Self.discovery(f), "\(f.pairsWithoutBump)",
            ]
            out += "| " + cells.joined(separator: " | ") + " |\n"
        }
        return out
    }

    /// When both sides of each booth had found each other: median and slowest, and how many
    /// sides never did.
    static func discovery(_ f: HandshakeEvaluation.Figures) -> String {
        guard let median = QualityFigures.percentile(f.discoveries, 0.5), let slowest = f.discoveries.max() else { return "never" }
        let seconds = { (t: Double) in EvaluationReport.fixed(t, 1) + " s" }
        return "\(seconds(median)) / \(seconds(slowest))" + (f.neverFound > 0 ? ", \(f.neverFound) never" : "")
    }
}
