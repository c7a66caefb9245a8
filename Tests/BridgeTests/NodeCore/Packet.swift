import PeerProtocol

/// One frame put on the air, as the air's filters see it.
struct Packet {
    var from: Side
    /// The frame read with the real decoder on a v1 link; nil on a v2 link (sealed, or handshake).
    var message: PeerMessage?
    var bytes: [UInt8]
    var at: Int64
    /// Frames sent before this one, both directions together.
    var index: Int
    /// Frames of this kind this side sent before this one (v1 links).
    var kindIndex: Int
    /// Milliseconds since the first card of the pair's life went out, if one has.
    var sinceContact: Int64?
    var kind: MessageKind? { message?.kind }
}
