import ArgumentParser
import Capture
import Proximity
import Replay
import Bridge
import Foundation
import ServiceLifecycle
import Simulation

/// A scenario as a service: the driver runs it to its end, or until the group's graceful
/// shutdown (SIGINT, SIGTERM, a failed stdout) or a stop requested before the group ran; either
/// way the driver stops every node. Then the world's server, if any, closes.
struct ScenarioService: Service {
    let driver: SimulationDriver
    let stop: StopRequest
    var server: WorldServer? = nil

    func run() async throws {
        defer { server?.close() }
        try await withGracefulShutdownHandler {
            try await driver.run(until: { [stop] in stop.isRequested })
        } onGracefulShutdown: { [stop] in
            stop.request()
        }
    }
}
