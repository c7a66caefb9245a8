import PeerSecurity

/// How a node treats the peer channel: without an event key it speaks v1 in the clear, as
/// before; with one it speaks v2 (private adverts, Noise handshake, sealed frames) and, unless
/// `allowInsecurePeers`, refuses v1 peers.
package struct PeerSecuritySettings: Sendable, Equatable {
    package var groupKey: GroupKey?
    package var allowInsecurePeers = false
    /// How often the private advert's rotation nonce changes (and with it every advertised byte).
    package var advertRotationMilliseconds: Int64 = 15 * 60 * 1000
    /// Where the node's ephemeral keys and advert nonces come from: nil draws a secret seed from
    /// the system's random source at start (every rig); the simulation sets one per node so that
    /// a world runs the same way twice.
    package var keySeed: [UInt8]?

    package init() {}

    /// The `device` event's `security` value.
    package var mode: String { groupKey == nil ? "none" : (allowInsecurePeers ? "event-key, v1 peers allowed" : "event-key") }
}

/// Settings end up in log lines and test failures: neither may show the key seed.
extension PeerSecuritySettings: CustomStringConvertible, CustomReflectable {
    package var description: String {
        "PeerSecuritySettings(\(mode)\(groupKey.map { ", key \($0.fingerprint)" } ?? ""), key seed redacted)"
    }

    package var customMirror: Mirror { Mirror(self, children: ["mode": mode], displayStyle: .struct) }
}
