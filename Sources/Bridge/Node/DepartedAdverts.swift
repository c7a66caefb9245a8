import BLE
import PeerProtocol

/// Adverts that outlive their bridge. A killed bridge's kernel keeps its advertising instance
/// until the instance's timeout, and on an extended-advertising controller Linux re-enables the
/// set with the whole timeout each time a connection to it ends (6.1: `hci_disconn_complete_evt`
/// → `hci_enable_ext_advertising_sync`), so every peer that keeps connecting keeps the dead
/// bridge on the air (issue 34, item 3). A channel refused at an address says no bridge listens
/// there: the peer id that address advertised is remembered for a while, and once that peer is
/// lost its adverts from there create no new peer. A bridge that starts again at the address
/// advertises a new peer id (ids are random per run) and is heard at once; one that only failed
/// to listen for a moment is heard again after `holdMilliseconds`.
struct DepartedAdverts {
    /// Longer than a dead bridge stays on the air once nobody connects to it: the instance
    /// timeout (8 s, `BlueZAdapter.advertisingTimeoutSeconds`) after the kernel's idle disconnect.
    static let holdMilliseconds: Int64 = 60_000
    /// Entries kept at most: a flood of refusals from new addresses costs no more memory.
    static let capacity = 256

    private var entries: [BLEAddress: (peer: PeerID, until: Int64)] = [:]

    /// Our channel to `address`, which advertised `peer`, was refused.
    mutating func refused(_ address: BLEAddress, peer: PeerID, now: Int64) {
        if entries[address] == nil, entries.count >= Self.capacity,
            let oldest = entries.min(by: { $0.value.until < $1.value.until })
        {
            entries[oldest.key] = nil
        }
        entries[address] = (peer, now + Self.holdMilliseconds)
    }

    /// Whether an advert naming `peer` from `address` is a departed bridge's. An advert naming
    /// another peer (a new run at that address), or one heard after the hold, ends the entry.
    mutating func isDeparted(_ address: BLEAddress, peer: PeerID, now: Int64) -> Bool {
        guard let entry = entries[address] else { return false }
        guard entry.peer == peer, now < entry.until else {
            entries[address] = nil
            return false
        }
        return true
    }

    /// A link to or from `address` opened: a bridge listens there again.
    mutating func opened(_ address: BLEAddress) {
        entries[address] = nil
    }
}
