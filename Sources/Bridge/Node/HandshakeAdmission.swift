import BLE

/// Which links opened to us may go on to a handshake (issue 35). A responder's handshake costs a
/// Diffie-Hellman, and anyone can open links and replay a captured handshake message 1 as fast as
/// their controller allows (10 000 a second drove a rig to 70 % of a core). So new links from
/// strangers are admitted at a steady rate, with a small burst; the rest are closed at once,
/// before any work. Addresses whose links completed the handshake and a `hello` lately (the event's
/// rigs met before) are always admitted: proven peers' work goes first.
///
/// What it cannot do: before a handshake nothing tells an honest stranger from an attacker, so
/// under a flood a rig meeting a peer for the first time as responder gets in only at the
/// admission rate (the peer's next attempt may be the one admitted).
struct HandshakeAdmission: Sendable {
    /// Links from strangers admitted per second, and at most at once after a quiet while.
    let perSecond: Int
    let burst: Int
    private var tokens: Double
    private var refilledAt: Int64
    /// Addresses proven lately, with when; at most `trustedCapacity`, the least recent going first.
    private var trusted: [BLEAddress: Int64] = [:]
    static let trustedCapacity = 64

    init(perSecond: Int, burst: Int, now: Int64) {
        self.perSecond = perSecond
        self.burst = burst
        tokens = Double(burst)
        refilledAt = now
    }

    /// Whether a link just opened to us from `address` may go on.
    mutating func admit(_ address: BLEAddress, now: Int64) -> Bool {
        if trusted[address] != nil { return true }
        tokens = min(Double(burst), tokens + Double(max(0, now - refilledAt)) * Double(perSecond) / 1_000)
        refilledAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// A link from `address` completed its handshake and `hello`.
    mutating func trust(_ address: BLEAddress, now: Int64) {
        if trusted[address] == nil, trusted.count >= Self.trustedCapacity, let oldest = trusted.min(by: { $0.value < $1.value }) {
            trusted[oldest.key] = nil
        }
        trusted[address] = now
    }
}
