/// Where and how a rig publishes its events over MQTT (`--mqtt URL` and `"mqtt"` in the config).
package struct MQTTSettings: Sendable, Equatable, Codable {
    /// `mqtt://[USER[:PASSWORD]@]HOST[:PORT]` (1883) or `mqtts://…` (TLS, 8883).
    package var url: String
    /// Defaults to `nearby-bridge-<node id>`: one session per rig on the broker.
    package var clientID: String?
    package var username: String?
    package var password: String?
    /// CA certificates for `mqtts://` (PEM file); the system's otherwise.
    package var caFile: String?
    /// Topics are `<prefix>/<group>/<node>/<type>`; "nearby" unless given.
    package var topicPrefix: String?
    /// QoS of `range` events (0 unless given); every other event goes with QoS 1.
    package var rangeQoS: Int?
    /// Where undelivered events wait (default: the state directory's `mqtt-spool`).
    package var spoolDirectory: String?
    /// The spool's bound in bytes (64 MB unless given).
    package var spoolLimitBytes: Int?

    package init(url: String) { self.url = url }

    /// The keys of `"mqtt"` in a settings file.
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case url, clientID = "clientId", username, password, caFile, topicPrefix, rangeQoS, spoolDirectory, spoolLimitBytes
    }

    /// The URL taken apart; throws with the forms it takes.
    func endpoint() throws(MQTTError) -> (tls: Bool, host: String, port: Int, username: String?, password: String?) {
        let tls: Bool
        var rest: Substring
        if url.hasPrefix("mqtt://") {
            (tls, rest) = (false, url.dropFirst("mqtt://".count))
        } else if url.hasPrefix("mqtts://") {
            (tls, rest) = (true, url.dropFirst("mqtts://".count))
        } else {
            throw .badURL(url)
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var username: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at].split(separator: ":", maxSplits: 1).map(String.init)
            username = credentials.first
            password = credentials.count > 1 ? credentials[1] : nil
            rest = rest[rest.index(after: at)...]
        }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty, parts.count <= 2, !host.contains("/") else { throw .badURL(url) }
        var port = tls ? 8883 : 1883
        if parts.count == 2 {
            guard let given = Int(parts[1]), (1...65535).contains(given) else { throw .badURL(url) }
            port = given
        }
        return (tls, String(host), port, username, password)
    }
}
