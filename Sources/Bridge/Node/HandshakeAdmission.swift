import BLE

/// Which links opened to us may go on to a handshake (issue 35). A responder's handshake costs a
/// Diffie-Hellman, and anyone can open links and replay a captured handshake message 1 as fast as
/// their controller allows (10 000 a second drove a rig to 70 % of a core). So new links from
/// strangers are admitted at a steady rate, with a small burst; the rest are closed at once,
/// before any work. Addresses whose links completed the handshake and a `hello` lately (the event's
/// rigs met before) are always admitted: proven peers' work goes first. An address whose link
/// failed (a handshake refused, a first message that was not a `hello`, no `hello` in time) is
/// backed off, longer at each failure in a row: a keyless peer that keeps trying costs one
/// handshake per back-off and takes no admission from the others meanwhile.
///
/// What it cannot do: before a handshake nothing tells an honest stranger from an attacker, so
/// under a flood a rig meeting a peer for the first time as responder gets in only at the
/// admission rate (the peer's next attempt may be the one admitted); an attacker with many
/// addresses gets one try per address per back-off.
struct HandshakeAdmission: Sendable {
    /// Links from strangers admitted per second, and at most at once after a quiet while.
    let perSecond: Int
    let burst: Int
    private var tokens: Double
    private var refilledAt: Int64
    /// Addresses proven lately, with when; at most `trustedCapacity`, the least recent going first.
    private var trusted: [BLEAddress: Int64] = [:]
    static let trustedCapacity = 64
    /// Addresses whose links failed lately: how often in a row, the last time, and until when
    /// their links are closed at once. At most `backedOffCapacity`, the one released first going.
    private var backedOff: [BLEAddress: BackOff] = [:]
    static let backedOffCapacity = 4_096
    /// The first back-off, doubled at each failure in a row up to `longestBackOffMilliseconds`.
    static let firstBackOffMilliseconds: Int64 = 1_000
    static let longestBackOffMilliseconds: Int64 = 64_000
    /// After this long without a failure an address starts again from the first back-off.
    static let forgivenAfterMilliseconds: Int64 = 600_000

    struct BackOff: Sendable {
        var failures: Int
        var lastFailure: Int64
        var until: Int64
    }

    /// How long an address that failed `failures` times in a row is backed off.
    static func backOff(afterFailures failures: Int) -> Int64 {
        min(longestBackOffMilliseconds, firstBackOffMilliseconds << min(max(failures, 1) - 1, 16))
    }

    init(perSecond: Int, burst: Int, now: Int64) {
        self.perSecond = perSecond
        self.burst = burst
        tokens = Double(burst)
        refilledAt = now
    }

    enum Verdict: Equatable, Sendable {
        case admitted
        /// The address failed lately and is backed off.
        case backedOff
        /// More strangers than the admission rate allows.
        case overRate
    }

    /// Whether a link just opened to us from `address` may go on.
    mutating func admit(_ address: BLEAddress, now: Int64) -> Verdict {
        if let backOff = backedOff[address], now < backOff.until { return .backedOff }
        if trusted[address] != nil { return .admitted }
        tokens = min(Double(burst), tokens + Double(max(0, now - refilledAt)) * Double(perSecond) / 1_000)
        refilledAt = now
        guard tokens >= 1 else { return .overRate }
        tokens -= 1
        return .admitted
    }

    /// A link from `address` completed its handshake and `hello`.
    mutating func trust(_ address: BLEAddress, now: Int64) {
        backedOff[address] = nil
        if trusted[address] == nil, trusted.count >= Self.trustedCapacity, let oldest = trusted.min(by: { $0.value < $1.value }) {
            trusted[oldest.key] = nil
        }
        trusted[address] = now
    }

    /// A link from `address` failed before its `hello`: it is backed off, for longer than last
    /// time if it failed lately. Returns the back-off.
    @discardableResult
    mutating func failed(_ address: BLEAddress, now: Int64) -> Int64 {
        trusted[address] = nil
        var failures = 1
        if let last = backedOff[address], now - last.lastFailure < Self.forgivenAfterMilliseconds { failures = last.failures + 1 }
        let backOff = Self.backOff(afterFailures: failures)
        if backedOff[address] == nil, backedOff.count >= Self.backedOffCapacity,
            let first = backedOff.min(by: { ($0.value.until, $0.value.lastFailure) < ($1.value.until, $1.value.lastFailure) })
        {
            backedOff[first.key] = nil
        }
        backedOff[address] = BackOff(failures: failures, lastFailure: now, until: now + backOff)
        return backOff
    }
}
