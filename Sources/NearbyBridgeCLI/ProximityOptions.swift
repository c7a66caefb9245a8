import ArgumentParser
import Proximity

/// The proximity thresholds people tune (`demo`, `world`, `run`). Everything else keeps the
/// measured defaults (docs/PROXIMITY.md, "Proximity quality").
struct ProximityOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Enter the near zone at this filtered distance, metres.")
    var near: Double = ProximityConfig.default.nearMetres

    @Option(parsing: .unconditional, help: "Leave the near zone (a far event) at this filtered distance, metres; larger than --near.")
    var far: Double = ProximityConfig.default.farMetres

    @Option(parsing: .unconditional, help: "Contact distance for a bump, metres (at most 0.2; earlier apps used 0.08).")
    var bump: Double = ProximityConfig.default.bumpMetres

    func validate() throws {
        let problems = config.problems
        guard problems.isEmpty else { throw ValidationError(problems.joined(separator: "; ")) }
    }

    var config: ProximityConfig { ProximityConfig(nearMetres: near, farMetres: far, bumpMetres: bump) }
}
