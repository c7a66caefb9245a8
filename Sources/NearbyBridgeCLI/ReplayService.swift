import ArgumentParser
import Replay
import ServiceLifecycle

/// A replay runs to the end of its capture; a failed stdout ends it no sooner (nothing is lost
/// that the exit status does not report).
struct ReplayService: Service {
    let driver: ReplayDriver

    func run() async throws {
        try await driver.run()
    }
}
