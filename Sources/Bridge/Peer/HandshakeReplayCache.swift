/// The ephemeral keys of the handshake first messages a rig answered lately, to refuse a replayed
/// one before any work (issue 35). An honest initiator draws a fresh ephemeral key for each link
/// and repeats its message only on that link; the same key on another link is a capture played
/// back, which would otherwise cost a Diffie-Hellman and a link waiting for a `hello` that never
/// comes. Only messages that proved the event key are kept, so an outsider cannot push entries
/// out; at `capacity` (a minute and more of answers at the strangers' admission rate) the oldest goes.
struct HandshakeReplayCache: Sendable {
    static let capacity = 4_096
    /// Bytes of a handshake first message that are the initiator's ephemeral public key.
    static let keySize = 32

    private var seen: Set<[UInt8]> = []
    /// The same keys in the order answered, oldest first from `oldest`.
    private var order: [[UInt8]] = []
    private var oldest = 0

    /// Whether `message`'s ephemeral key was answered before.
    func contains(_ message: [UInt8]) -> Bool {
        seen.contains(Array(message.prefix(Self.keySize)))
    }

    /// `message` was answered: its ephemeral key is kept.
    mutating func insert(_ message: [UInt8]) {
        let key = Array(message.prefix(Self.keySize))
        guard seen.insert(key).inserted else { return }
        if order.count < Self.capacity {
            order.append(key)
            return
        }
        seen.remove(order[oldest])
        order[oldest] = key
        oldest = (oldest + 1) % Self.capacity
    }
}
