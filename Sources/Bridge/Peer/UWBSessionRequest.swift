import PeerProtocol

/// A UWB session the machine wants on the board.
struct UWBSessionRequest: Sendable, Equatable {
    var parameters: PeerMessage.RangingParameters
    var asController: Bool
    /// As controller of a one-to-many session: join the place reserved for this peer.
    var shared: Bool
    var sts: SessionSTS = .fromParameters
    /// FiRa round hopping (HOPPING_MODE 1), as the controller's `hello` said.
    var hops = false
}
