import ArgumentParser
import Doctor
import Events
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals
import WebView

/// The web view as a service: serves until the group shuts down (after the work, so the page
/// sees the last events), and says where on stderr, with the token when one is needed.
struct WebService: Service {
    let server: WebServer
    let endpoint: HTTPEndpoint
    let token: String?
    let logger: Logger

    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            group.addTask {
                let port = try await server.listeningPort()
                let query = token.map { "/?token=\($0)" } ?? "/"
                logger.notice("web view on http://\(endpoint.host):\(port)\(query)")
            }
            try await withGracefulShutdownHandler {
                do {
                    while try await group.next() != nil {}
                } catch {
                    // Stopping closes the listener and every stream: what that throws is the stop.
                    guard Task.isShuttingDownGracefully else { throw error }
                }
            } onGracefulShutdown: {
                Task { await server.stop() }
            }
            group.cancelAll()
        }
    }
}
