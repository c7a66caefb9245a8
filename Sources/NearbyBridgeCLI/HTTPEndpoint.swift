import ArgumentParser
import Bridge
import Capture
import Events
import Foundation
import Logging
import Proximity
import WebView

/// Where the web view listens: `PORT` (this machine only) or `ADDR:PORT` (an IPv4 address).
struct HTTPEndpoint: ExpressibleByArgument, Sendable {
    var host: String
    var port: UInt16

    init?(argument: String) {
        let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let port = UInt16(parts.last ?? "") else { return nil }
        host = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        guard host.split(separator: ".").count == 4, host.split(separator: ".").allSatisfy({ UInt8($0) != nil }) else { return nil }
        self.port = port
    }

    static var defaultValueDescription: String { "PORT or ADDR:PORT, e.g. 8080 or 0.0.0.0:8080" }

    var isLoopback: Bool { host.hasPrefix("127.") }

    /// 128 random bits, in hex.
    static func newToken() -> String {
        var random = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(random.next() as UInt64, radix: 16) }.joined()
    }
}
