import Bridge
import Capture
import PeerSecurity

/// A node's peer-channel security into a capture (settings in `capture.json`, the key and key
/// seed in `secrets.json`) and back out for replay.
extension CaptureManifest.Security {
    package init(_ settings: PeerSecuritySettings) {
        self.init(
            mode: settings.mode, keyFingerprint: settings.groupKey?.fingerprint,
            allowInsecurePeers: settings.allowInsecurePeers,
            advertRotationMilliseconds: settings.advertRotationMilliseconds)
    }
}

extension CaptureSecrets {
    /// The secrets of the keyed nodes among `nodes` (a keyless node has none worth keeping).
    package init(_ nodes: [(name: String, security: PeerSecuritySettings)]) {
        var secrets: [String: Node] = [:]
        for (name, security) in nodes {
            guard let key = security.groupKey, let seed = security.keySeed else { continue }
            secrets[name] = Node(groupKey: key.text, keySeed: seed)
        }
        self.init(nodes: secrets)
    }
}

extension PeerSecuritySettings {
    /// A node's settings as recorded. A keyed node needs its entry in `secrets.json`, with the
    /// key whose fingerprint `capture.json` names; without it replay would decrypt nothing and
    /// tell a different story, so it stops with what is missing instead.
    package init(
        recorded: CaptureManifest.Security?, secrets: CaptureSecrets?, node: String, directory: String
    ) throws(CaptureError) {
        self.init()
        guard let recorded else { return }
        allowInsecurePeers = recorded.allowInsecurePeers
        advertRotationMilliseconds = recorded.advertRotationMilliseconds
        guard let fingerprint = recorded.keyFingerprint else { return }
        let path = "\(directory)/\(CaptureSecrets.fileName)"
        guard let secrets else {
            throw .missing(
                path: path,
                reason: "node \(node) ran with an event key (fingerprint \(fingerprint)); replay needs the key and key seed --capture wrote there")
        }
        guard let entry = secrets.nodes[node] else { throw .malformed(path: path, reason: "it has nothing for node \(node)") }
        guard let key = try? GroupKey(text: entry.groupKey), key.fingerprint == fingerprint else {
            throw .malformed(path: path, reason: "node \(node)'s event key is not the one it ran with (fingerprint \(fingerprint))")
        }
        guard let seed = entry.keySeedBytes, !seed.isEmpty else {
            throw .malformed(path: path, reason: "node \(node)'s key seed is not hexadecimal")
        }
        groupKey = key
        keySeed = seed
    }
}
