/// What the node's proximity state says about a peer when an input reaches its machine. The
/// node core is the only owner of proximity (it runs every ranging round); the machine reads this
/// snapshot and answers with `.consumeContact` when it takes the gesture's contact.
struct ProximityView: Sendable, Equatable {
    var contactArmed = false
    var filtered: Double?
    var isNear = false
    /// When a round last carried a distance: the peer is alive even if it sends no message.
    var lastMeasuredAt: Int64?
}
