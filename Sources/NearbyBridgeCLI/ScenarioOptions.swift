import ArgumentParser
import Capture
import Proximity
import Replay
import Bridge
import Foundation
import GATTServer
import ServiceLifecycle
import Simulation

/// Options of the commands that run a scenario (`demo`, `world`).
struct ScenarioOptions: ParsableArguments {
    @Option(
        help: "Scenario JSON file, or a built-in scenario by name: meetup (two rigs' and three visitors' bumps), phones (a rig, a rig visitor and two iPhones), android (a rig, a rig visitor and an Android phone per ranging OOB version). Default: the command's built-in scenario.",
        completion: .file(extensions: ["json"]))
    var scenario: String?

    @Option(parsing: .unconditional, help: "Scenario seconds per wall-clock second; 0 runs as fast as possible (demo only).")
    var speed: Double = 1

    @Option(parsing: .unconditional, help: "Stop after this many scenario seconds (default: the scenario's duration).")
    var duration: Double?

    @Option(parsing: .unconditional, help: "Seed for identities and radio noise; the same seed gives the same events.")
    var seed: UInt64 = 1

    func validate() throws {
        guard speed >= 0, speed.isFinite else {
            throw ValidationError("--speed must be 0 (as fast as possible) or a positive number, e.g. --speed 4")
        }
        if let duration, !(duration > 0) {
            throw ValidationError("--duration must be a positive number of seconds, e.g. --duration 30")
        }
    }

    /// The `--scenario` file, or the built-in one; a file that is not a scenario (unreadable,
    /// malformed, a key nothing reads) is a usage error, exit status 64, like a bad `--config`.
    func load(builtIn name: String) throws -> Scenario {
        guard let scenario else { return try Scenario.builtIn(name) }
        // A name without a file of that name is a built-in scenario's.
        if Scenario.builtInNames.contains(scenario), !FileManager.default.fileExists(atPath: scenario) {
            return try Scenario.builtIn(scenario)
        }
        do {
            return try Scenario.load(contentsOf: URL(fileURLWithPath: scenario))
        } catch let error as Scenario.Invalid {
            throw ValidationError("--scenario \(scenario): \(error)")
        }
    }

    /// Driver options stamped on the wall clock, so event times read as now; with a capture,
    /// every in-process node of `scenario` is recorded.
    func driverOptions(for scenario: Scenario, capture: CaptureDirectory?) throws -> SimulationDriver.Options {
        var options = SimulationDriver.Options()
        if let capture {
            var recorders: [String: NodeRecorder] = [:]
            for node in scenario.nodes where node.external != true && !node.isPhone { recorders[node.name] = try capture.recorder(node: node.name) }
            options.instrument = { [recorders] name, uwb, ble, time in
                let clock: @Sendable () -> Int64 = { time.wallMilliseconds() * 1000 }
                return (recorders[name]!.wrap(uwb: uwb, clock: clock), recorders[name]!.wrap(ble: ble, psm: BridgeConfig().psm, clock: clock))
            }
            options.instrumentGATT = { [recorders] name, gatt, services, time in
                recorders[name]!.wrap(gatt: gatt, database: PhoneTransport.database(offering: services)) { time.wallMilliseconds() * 1000 }
            }
        }
        options.seed = seed
        options.speed = speed > 0 ? speed : nil
        options.duration = duration
        options.epochMilliseconds = SystemClock().wallMilliseconds()
        return options
    }

    /// Records what replay needs to rebuild the in-process nodes.
    static func writeManifest(_ driver: SimulationDriver, proximity: ProximityConfig, to capture: CaptureDirectory?) throws {
        guard let capture else { return }
        try CaptureManifest(
            stepMilliseconds: driver.stepMilliseconds, durationMilliseconds: driver.durationMilliseconds,
            proximity: .init(proximity),
            nodes: driver.nodeSetups.map { CaptureManifest.Node($0.name, $0.node, seed: $0.seed, phoneServices: $0.phoneServices) }
        ).write(to: capture.path)
        try CaptureSecrets(driver.nodeSetups.map { ($0.name, $0.node.security) }).write(to: capture.path)
    }

}

extension CaptureManifest.Thresholds {
    init(_ config: ProximityConfig) {
        self.init(nearMetres: config.nearMetres, farMetres: config.farMetres, bumpMetres: config.bumpMetres)
    }
}

extension CaptureManifest.Node {
    /// `gattDeviceName`: the Generic Access service's name, where the GATT backend serves that
    /// service itself (the kernel ATT backend).
    init(_ name: String, _ node: BridgeNode, seed: UInt64, phoneServices: [PhoneTransport], gattDeviceName: String? = nil) {
        self.init(
            name: name, peerID: node.identity.peerID.description, group: node.identity.group,
            uwbShortAddress: node.identity.uwbShortAddress, card: node.identity.card.json, seed: seed,
            uwbBackend: node.uwbBackend, bleBackend: node.bleBackend, security: .init(node.security))
        if !phoneServices.isEmpty { gatt = .init(phoneServices: phoneServices.map(\.rawValue), deviceName: gattDeviceName) }
    }
}
