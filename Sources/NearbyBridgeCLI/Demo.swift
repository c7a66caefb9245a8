import ArgumentParser
import Bridge
import Capture
import ServiceLifecycle
import Simulation

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a simulated meetup: this rig plus virtual peers, all through the real bridge code.",
        discussion: """
            Every node (the rig and each virtual peer) runs the full bridge: UCI bytes to a virtual \
            UWB board, adverts and links on a virtual Bluetooth air. Events of all nodes are \
            printed, tagged with the observing node's peer id in `node`. The built-in scenario has \
            peers walking past, two bumps (each reported by both sides), and a peer leaving.

            \(ExitStatus.help)
            """)

    @OptionGroup var common: CommonOptions

    @OptionGroup var scenario: ScenarioOptions

    @OptionGroup var proximity: ProximityOptions

    func run() async throws {
        let capture = try common.openCapture()
        let context = try common.bootstrap(capture: capture, thresholds: proximity.config)
        try await context.run { try simulate(capture: capture, context: context) }
    }

    private func simulate(capture: CaptureDirectory?, context: CommandContext) throws -> any Service {
        let (events, logger) = (context.events, context.logger)
        let world = try scenario.load(builtIn: "meetup")
        if world.nodes.contains(where: { $0.external == true }) {
            throw ValidationError("the scenario has external nodes; serve it with `nearby-bridge world --scenario FILE` instead")
        }
        var options = try scenario.driverOptions(for: world, capture: capture)
        options.bridge.proximity = proximity.config
        let driver = SimulationDriver(scenario: world, options: options, events: events, logger: logger)
        for (name, identity) in driver.identities.sorted(by: { $0.key < $1.key }) {
            logger.notice("node \(name) = \(identity.peerID)")
        }
        try ScenarioOptions.writeManifest(driver, proximity: proximity.config, to: capture)
        return ScenarioService(driver: driver, stop: context.stop)
    }
}
