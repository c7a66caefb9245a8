import FlyingFox
import FlyingSocks
import Foundation
import Proximity
import Watch

/// The web view over HTTP (FlyingFox): `/` the page, `/events` the event lines as Server-Sent
/// Events (`id:` is the line's number in the backlog; a browser that reconnects sends
/// `Last-Event-ID` and gets what it missed while the backlog still holds it), `/state` the peer
/// table as JSON, `/metrics` in Prometheus's text format (`BridgeMetrics`). Off by default; bound to loopback unless an address is given, and then every
/// request must carry the token (`?token=` or `Authorization: Bearer`).
package final class WebServer: Sendable {
    package let sink: WebSink
    private let server: HTTPServer
    /// What every request must carry, if anything.
    package let token: String?
    private let thresholds: ProximityConfig

    /// - Parameters:
    ///   - host: an IPv4 address; "127.0.0.1" keeps the view on this machine.
    ///   - token: required of every request when set (the caller sets one when `host` is not
    ///     loopback).
    package init(host: String, port: UInt16, token: String?, thresholds: ProximityConfig, backlog: Int = 4096) throws {
        sink = WebSink(backlog: EventBacklog(capacity: backlog), metrics: BridgeMetrics())
        self.token = token
        self.thresholds = thresholds
        server = HTTPServer(address: try .inet(ip4: host, port: port), timeout: 3600, logger: .disabled)
    }

    /// Serves until cancelled.
    package func run() async throws {
        let sink = self.sink
        let token = self.token
        let thresholds = self.thresholds
        await server.appendRoute("GET /events") { request in
            guard Self.authorised(request, token: token) else { return Self.forbidden }
            let resume = request.headers[HTTPHeader("Last-Event-ID")].flatMap { Int($0) }
            let cursor = EventCursor(resumingAfter: resume, in: sink.backlog, lagLimit: 512)
            return HTTPResponse(
                statusCode: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", HTTPHeader("X-Accel-Buffering"): "no"],
                body: HTTPBodySequence(from: EventStreamBody(backlog: sink.backlog, cursor: cursor)))
        }
        await server.appendRoute("GET /state") { request in
            guard Self.authorised(request, token: token) else { return Self.forbidden }
            let snapshot = StateSnapshot(view: sink.view, near: thresholds.nearMetres, far: thresholds.farMetres)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "application/json"], body: try encoder.encode(snapshot))
        }
        await server.appendRoute("GET /metrics") { request in
            guard Self.authorised(request, token: token) else { return Self.forbidden }
            return HTTPResponse(
                statusCode: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: Data(sink.metricsExposition().utf8))
        }
        await server.appendRoute("GET /") { request in
            guard Self.authorised(request, token: token) else { return Self.forbidden }
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: Data(WebPage.html.utf8))
        }
        try await server.run()
    }

    /// The port it listens on, once listening (useful with port 0).
    package func listeningPort() async throws -> UInt16 {
        try await server.waitUntilListening()
        guard case .ip4(_, let port)? = await server.listeningAddress else { return 0 }
        return port
    }

    /// Closes every connection within `timeout` seconds.
    package func stop() async {
        await server.stop(timeout: 1)
    }

    private static let forbidden = HTTPResponse(
        statusCode: .forbidden, headers: [.contentType: "text/plain"], body: Data("a token is required: ?token=… (printed on stderr at start)\n".utf8))

    private static func authorised(_ request: HTTPRequest, token: String?) -> Bool {
        guard let token else { return true }
        return request.query["token"] == token || request.headers[.authorization] == "Bearer \(token)"
    }
}
