import ArgumentParser
import Bridge
import Foundation
import Simulation

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a simulated meetup: this rig plus virtual peers, all through the real bridge code.",
        discussion: """
            Every node (the rig and each virtual peer) runs the full bridge: UCI bytes to a virtual \
            UWB board, adverts and links on a virtual Bluetooth air. Events of all nodes are \
            printed, tagged with the observing node's peer id in `node`. The built-in scenario has \
            peers walking past, two bumps (each reported by both sides), and a peer leaving.
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Scenario JSON file (default: the built-in meetup).", completion: .file(extensions: ["json"]))
    var scenario: String?

    @Option(help: "Scenario seconds per wall-clock second; 0 runs as fast as possible.")
    var speed: Double = 1

    @Option(help: "Stop after this many scenario seconds (default: the scenario's duration).")
    var duration: Double?

    @Option(help: "Seed for identities and radio noise; the same seed gives the same events.")
    var seed: UInt64 = 1

    func validate() throws {
        guard speed >= 0, speed.isFinite else { throw ValidationError("--speed must be 0 (as fast as possible) or a positive number, e.g. --speed 4") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds, e.g. --duration 30") }
    }

    func run() async throws {
        let (events, logger) = common.bootstrap()
        let world = try scenario.map { try Scenario.load(contentsOf: URL(fileURLWithPath: $0)) } ?? Scenario.builtIn()
        if world.nodes.contains(where: { $0.external == true }) {
            throw ValidationError("the scenario has external nodes; serve it with `nearby-bridge world --scenario FILE` instead")
        }
        var options = SimulationDriver.Options()
        options.seed = seed
        options.speed = speed > 0 ? speed : nil
        options.duration = duration
        options.epochMilliseconds = WallClock().nowMilliseconds()
        let driver = SimulationDriver(scenario: world, options: options, events: events, logger: logger)
        for (name, identity) in driver.identities.sorted(by: { $0.key < $1.key }) {
            logger.notice("node \(name) = \(identity.peerID)")
        }
        let stop = StopSignal()
        let stopRequested = stop.flag
        defer { withExtendedLifetime(stop) {} }
        try await driver.run(until: { stopRequested.isSet })
    }
}
