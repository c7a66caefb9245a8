import PeerProtocol
import Proximity
import UCI

/// Who this rig is, as peers see it.
package struct NodeIdentity: Sendable, Equatable {
    package var peerID: PeerID
    package var name: String
    package var group: UInt16
    package var card: ProfileCard
    /// Our UWB short MAC address (advertised, used in every session).
    package var uwbShortAddress: UInt16

    package init(peerID: PeerID, name: String, group: UInt16, card: ProfileCard, uwbShortAddress: UInt16) {
        self.peerID = peerID
        self.name = name
        self.group = group
        self.card = card
        self.uwbShortAddress = uwbShortAddress
    }

    /// Event `node` field.
    package var tag: String { peerID.description }
}
