import BLE
import PeerProtocol
import PeerSecurity

/// Binds a private advert to the radio that sent it (issue 35, item 1). A rig whose adapter
/// makes its resolvable private addresses with the rig's identity resolving key sets
/// `addressBound` in its advert; every rig of the event derives that key from the event key and
/// the advertised peer id (`KeySchedule.identityResolvingKey`), so an advert with the bit heard
/// from an address the key does not resolve was sent again by someone else's radio: a replay.
/// It is dropped before it counts as hearing the peer, so it can neither draw a connection nor
/// keep a departed rig listed. An advert without the bit (a rig whose adapter has no LE privacy,
/// or a build before the bit) is taken from any address, as before.
struct AddressBinding {
    /// Keys kept at most: only holders of the event key can make adverts with new peer ids.
    static let capacity = 1024

    private let key: GroupKey
    private var keys: [PeerID: [UInt8]] = [:]

    init(key: GroupKey) { self.key = key }

    /// Whether `advert`, opened with our event key, may have come from `address`.
    mutating func admits(_ advert: Advertisement, from address: BLEAddress) -> Bool {
        guard advert.capabilities.contains(.addressBound) else { return true }
        return ResolvablePrivateAddress.resolves(address, irk: identityResolvingKey(of: advert.peerID))
    }

    private mutating func identityResolvingKey(of peer: PeerID) -> [UInt8] {
        if let known = keys[peer] { return known }
        if keys.count >= Self.capacity { keys.removeAll(keepingCapacity: true) }
        let derived = KeySchedule.identityResolvingKey(key, peer: peer)
        keys[peer] = derived
        return derived
    }
}
