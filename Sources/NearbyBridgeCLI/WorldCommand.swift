import ArgumentParser
import Bridge
import Capture
import ServiceLifecycle
import Simulation

struct WorldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "world",
        abstract: "Serve a virtual world over TCP so `nearby-bridge run` (or pica-style UCI hosts) can range in it.",
        discussion: """
            Each external node of the scenario gets a virtual UWB board on its own TCP port (raw \
            FiRa UCI, one connection = one board, like Google's pica) and a place on the virtual \
            Bluetooth air (shared port; the client names its node). The scenario's other nodes run \
            in this process and their events go to stdout. Runs until interrupted or --duration.

            \(ExitStatus.help)
            """)

    @OptionGroup var common: CommonOptions

    @OptionGroup var scenario: ScenarioOptions

    @OptionGroup var proximity: ProximityOptions

    @Option(help: "Address to listen on.")
    var listen = "127.0.0.1"

    @Option(help: "UCI port of the first external node; the next ones count up.")
    var uwbPort: UInt16 = 7000

    @Option(help: "Port of the virtual Bluetooth air.")
    var airPort: UInt16 = 7100

    func validate() throws {
        guard scenario.speed > 0 else { throw ValidationError("a world server runs in real time: --speed must be positive, e.g. --speed 2") }
    }

    func run() async throws {
        let capture = try common.openCapture()
        let context = try common.bootstrap(capture: capture, thresholds: proximity.config)
        try await context.run { try serve(capture: capture, context: context) }
    }

    private func serve(capture: CaptureDirectory?, context: CommandContext) throws -> any Service {
        let (events, logger) = (context.events, context.logger)
        let spec = try scenario.load(builtIn: "world")
        guard spec.nodes.contains(where: { $0.external == true }) else {
            throw ValidationError("the scenario has no external node to serve; mark one with \"external\": true")
        }
        var options = try scenario.driverOptions(for: spec, capture: capture)
        options.bridge.proximity = proximity.config
        let driver = SimulationDriver(scenario: spec, options: options, events: events, logger: logger)
        let server = try WorldServer(world: driver.world, host: listen, uwbBasePort: uwbPort, airPort: airPort, logger: logger)
        for endpoint in server.endpoints {
            logger.notice(
                "\(endpoint.body): nearby-bridge run --uwb tcp:\(listen):\(endpoint.uwbPort) --ble world:\(listen):\(server.airPort)/\(endpoint.body)")
        }
        do {
            try ScenarioOptions.writeManifest(driver, proximity: proximity.config, to: capture)
        } catch {
            server.close()
            throw error
        }
        return ScenarioService(driver: driver, stop: context.stop, server: server)
    }
}
