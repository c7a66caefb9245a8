/// What an attacker node does (issue 35, "tested the way an attacker would"): a scenario node with
/// `"attack": {"kind": "garbage", "rate": 5}` runs no bridge; the world drives it (`Attacker`).
/// `rate` is per second: adverts replayed, or links opened. `target` limits it to one node by name.
package struct Attack: Codable, Sendable, Equatable {
    package enum Kind: String, Codable, Sendable, CaseIterable {
        /// Re-broadcasts, from its own address, the last advert it heard from a real node, byte for byte.
        case advertReplay
        /// Connects to every address it hears and sends a handshake message 1 under another key.
        case keylessFollower
        /// Sends a real handshake message 1 (made with the event key) on every new link.
        case handshakeReplay
        /// Sends random bytes and cut-short frames on every new link.
        case garbage
        /// Opens links and says nothing on them.
        case connectionFlood
    }

    package var kind: Kind
    package var rate: Double
    package var target: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case kind, rate, target
    }

    package init(kind: Kind, rate: Double, target: String? = nil) {
        self.kind = kind
        self.rate = rate
        self.target = target
    }
}
