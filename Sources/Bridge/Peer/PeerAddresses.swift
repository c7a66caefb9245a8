import BLE

/// Where a peer may be reached: every address its adverts came from lately, not only the last.
///
/// An advert proves nothing about who sent it: a replayed private advert opens as well from an
/// attacker's address as from the peer's. So an address earns trust only when a link to it
/// opens (on a v2 link, after the handshake that proves the event key), and an address whose
/// attempt failed (timed out, or closed before it opened) goes behind those that have not
/// failed as often. A replayer's address then costs one attempt and is not tried again while
/// the peer's own address is heard, and can never displace the address that proved itself.
/// An address that refused us (the handshake failed: whoever answers there lacks the event key;
/// or the host refused the channel: no bridge listens there) is not tried again for a while,
/// longer at each refusal in a row (`HandshakeAdmission.backOff`), and its adverts stop counting
/// as the peer being heard: a peer whose every address was refused is backed off as a whole, and
/// lost once nothing else is heard from it.
///
/// A peer with LE privacy changes its address (every 15 min on Linux): the old one then falls
/// silent for good, and a kernel connecting to it waits until we give up. So an address gone
/// quiet for several of the peer's advert intervals while another is heard is not where to
/// connect, proven or not. The interval is the peer's own (learned from its adverts), so the
/// proven address, heard at that pace, is never passed over between two of its adverts.
struct PeerAddresses: Sendable {
    struct Entry: Equatable, Sendable {
        var firstHeard: Int64
        var lastHeard: Int64
        /// Adverts heard from it.
        var count = 0
        /// The signal strength of its last advert, in 6 dB steps (finer differences are noise).
        var strength = Int.min
        var failures = 0
        var refusals = 0
        /// Not tried before this time.
        var heldUntil: Int64 = 0
    }

    /// Addresses kept per peer: a peer's own (one, or two while its private address rotates) and
    /// a few replayers'. Beyond it the least recently heard address that never proved itself goes,
    /// so a flood of replays from new addresses costs no memory.
    static let capacity = 4

    private(set) var entries: [BLEAddress: Entry] = [:]
    /// The address whose link last opened.
    private(set) var proven: BLEAddress?

    /// An advert came from `address` at `rssi` dBm.
    mutating func heard(_ address: BLEAddress, rssi: Int, at now: Int64) {
        if entries[address] == nil, entries.count >= Self.capacity,
            let oldest = entries.filter({ $0.key != proven }).min(by: { $0.value.lastHeard < $1.value.lastHeard })
        {
            entries[oldest.key] = nil
        }
        entries[address, default: Entry(firstHeard: now, lastHeard: now)].lastHeard = now
        entries[address]?.count += 1
        entries[address]?.strength = Int((Double(rssi) / 6).rounded(.down))
    }

    /// Where to connect now, among the addresses heard within `window` and not gone quiet (above):
    /// the proven one, else the
    /// one that failed least often, else the one heard strongest (a peer comes close to bump,
    /// and replayers standing farther off than it are tried after it), else the one heard first
    /// (a replayer can only copy an advert after the peer sent it).
    func best(at now: Int64, window: Int64) -> BLEAddress? {
        let open = entries.filter { now - $0.value.lastHeard <= window && now >= $0.value.heldUntil }
        let newest = open.values.map(\.lastHeard).max() ?? now
        let quiet = advertInterval.map { 3 * $0 } ?? .max
        return open.filter { newest - $0.value.lastHeard <= quiet }
            .min { a, b in
                if (a.key == proven) != (b.key == proven) { return a.key == proven }
                if a.value.failures != b.value.failures { return a.value.failures < b.value.failures }
                if a.value.strength != b.value.strength { return a.value.strength > b.value.strength }
                if a.value.firstHeard != b.value.firstHeard { return a.value.firstHeard < b.value.firstHeard }
                return a.key.description < b.key.description
            }?.key
    }

    /// The peer's advert interval: its proven address's pace (a replayer's faster one must not
    /// pass over the peer's own address between its adverts), else the most heard address's;
    /// nil before that address was heard twice.
    private var advertInterval: Int64? {
        guard let pacer = proven.flatMap({ entries[$0] }) ?? entries.values.max(by: { $0.count < $1.count }), pacer.count > 1
        else { return nil }
        return (pacer.lastHeard - pacer.firstHeard) / Int64(pacer.count - 1)
    }

    /// An attempt to `address` ended before its link opened.
    mutating func failed(_ address: BLEAddress) {
        entries[address]?.failures += 1
    }

    /// Whoever answers at `address` refused us (its handshake or its channel): a failure, and a back-off.
    mutating func refused(_ address: BLEAddress, at now: Int64) {
        guard var entry = entries[address] else { return }
        entry.failures += 1
        entry.refusals += 1
        entry.heldUntil = now + HandshakeAdmission.backOff(afterFailures: entry.refusals)
        entries[address] = entry
        if proven == address { proven = nil }
    }

    /// Whether the last answer from `address` was a refusal (its handshake or its channel), with
    /// no link to it opened since.
    func refusedLast(_ address: BLEAddress) -> Bool {
        (entries[address]?.refusals ?? 0) > 0
    }

    /// A link to `address` opened: it is the peer's, until another proves itself.
    mutating func proved(_ address: BLEAddress) {
        proven = address
        entries[address]?.failures = 0
        entries[address]?.refusals = 0
        entries[address]?.heldUntil = 0
    }
}
