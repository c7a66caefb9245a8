import ArgumentParser
import Foundation
import ProximityEvaluation

/// `proximity-eval`: measures the proximity engine and prints the quality table. A separate
/// executable because `nearby-bridge`'s stdout carries only events; this one prints Markdown.
@main
struct ProximityEval: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proximity-eval",
        abstract: "Measure bump, near/far and handshake quality on generated traces; print the table (Markdown) on stdout.",
        discussion: """
            Generates traces (approach-and-bump, hand-overs, pass-bys, neighbours at a table, walking \
            groups, people standing at a zone threshold) at ranging noise σ 5, 10 and 20 cm with the \
            simulation's radio model, runs them through the proximity engine, and scores the result. \
            Then runs pairs of full bridges bumping over a virtual air that loses messages and scores \
            two-sided agreement. Exits with status 1 when a target of issue 5 (at σ = 10 cm) is not met. \
            Build it optimised: swift run -c release proximity-eval (about 3 minutes at --scale 1).
            """)

    @Option(help: "Seed for traces, noise and the simulated bridges; the same seed gives the same table.")
    var seed: UInt64 = 1

    @Option(help: "Fraction of the full run (10 000 bump gestures, 1 000 table-neighbour hours, 8 bridge pairs for an hour, …).")
    var scale: Double = 1

    func validate() throws {
        guard scale > 0, scale <= 10 else { throw ValidationError("--scale must be above 0 and at most 10, e.g. --scale 0.1") }
    }

    func run() async throws {
        let started = Date()
        let report = try await EvaluationReport.run(seed: seed, scale: scale)
        FileHandle.standardOutput.write(Data(report.markdown.utf8))
        FileHandle.standardError.write(Data("proximity-eval: \(Int(Date().timeIntervalSince(started))) s\n".utf8))
        if !report.allTargetsMet { throw ExitCode(1) }
    }
}
