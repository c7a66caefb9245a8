/// Turns a byte stream (USB bulk, tty, TCP: packets back to back, no extra framing) into messages.
///
/// Memory stays bounded: once `next()` has returned nil, the decoder holds at most one
/// partial packet plus one partial message of each kind, never accumulated garbage.
/// There is no checksum in UCI, so resynchronisation relies on the header looking plausible:
/// the MT must be 0-3 (the host expects responses, notifications and data; commands are
/// accepted so the same decoder serves a device), and a data header must name a known DPF
/// and a length the message limit allows. The latter matters because runs of zeros and line
/// noise most often look like MT 0, and a bogus data length could swallow up to 64 KiB.
package struct UCIStreamDecoder: Sendable {
    private var buffer: [UInt8] = []
    /// Index of the first unconsumed byte; consumed bytes are compacted away in batches.
    private var head = 0
    private var reassembler: UCIReassembler
    private let maxMessageSize: Int
    /// The storage of a payload handed back by `recycle`: the next packet's payload is copied into
    /// it, so a caller that recycles its messages decodes without an allocation per message.
    private var spare: [UInt8] = []
    /// Bytes dropped while resynchronising on garbage.
    package private(set) var discardedByteCount = 0
    /// Where in the stream the first unconsumed byte is: bytes consumed or dropped so far.
    package private(set) var streamOffset = 0

    /// Bytes received but not yet part of a returned message: the start of a packet whose rest
    /// has not arrived.
    package var pendingByteCount: Int { buffer.count - head }

    package init(maxMessageSize: Int = 4096) {
        self.maxMessageSize = maxMessageSize
        reassembler = UCIReassembler(maxMessageSize: maxMessageSize)
    }

    /// Queues received bytes; drain them by calling `next()` until it returns nil.
    package mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The same for a transport's read: the generic version runs unspecialised when called from
    /// another module (3 % of the node loop's CPU per notification, docs/PERFORMANCE.md).
    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    /// Next complete message, nil if more bytes are needed.
    ///
    /// Throws (`.garbage(skipped:)`, `.segmentMismatch`, `.messageTooLarge`, ...) and stays
    /// usable: call again to continue after the error. Each run of dropped bytes is reported once.
    package mutating func next() throws(UCIError) -> UCIMessage? {
        while true {
            switch plausibility(at: head) {
            case .needMore:
                compact()
                return nil
            case .no:
                var end = head + 1
                while end < buffer.count, plausibility(at: end) == .no { end += 1 }
                let skipped = end - head
                head = end
                streamOffset += skipped
                discardedByteCount += skipped
                compact()
                throw .garbage(skipped: skipped)
            case .yes:
                guard let (packet, consumed) = try UCIPacket.parse(buffer[head...], reusing: &spare) else {
                    compact()
                    return nil
                }
                head += consumed
                streamOffset += consumed
                if let message = try reassembler.push(packet) {
                    compact()
                    return message
                }
            }
        }
    }

    /// Takes back a message `next()` returned, once nothing else holds its payload, for the
    /// payload's storage.
    package mutating func recycle(_ message: consuming UCIMessage) {
        var payload: [UInt8] = []
        swap(&payload, &message.payload)
        payload.removeAll(keepingCapacity: true)
        if payload.capacity > spare.capacity { spare = payload }
    }

    /// Gives up on the packet that has been waiting for its rest: its first byte is dropped and
    /// `next()` looks for a plausible header after it. For a header whose length was corrupted,
    /// which would otherwise swallow the packets after it until that many bytes came.
    package mutating func skipStalledPacket() {
        guard head < buffer.count else { return }
        head += 1
        streamOffset += 1
        discardedByteCount += 1
    }

    private enum Plausibility { case yes, no, needMore }

    private func plausibility(at index: Int) -> Plausibility {
        guard index < buffer.count else { return .needMore }
        let octet0 = buffer[index]
        switch octet0 >> 5 {
        case 1, 2, 3:
            return .yes
        case 0:
            switch octet0 & 0x0F {
            case 0x1, 0x2, 0xF: break  // DATA_MESSAGE_SND, DATA_MESSAGE_RCV, radar data (AOSP)
            default: return .no
            }
            guard index + 3 < buffer.count else { return .needMore }
            let length = Int(buffer[index + 2]) | Int(buffer[index + 3]) << 8
            return length <= maxMessageSize ? .yes : .no
        default:
            return .no
        }
    }

    /// Drops consumed bytes once they dominate the buffer, keeping appends amortised O(1).
    private mutating func compact() {
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.count <= 4 * maxMessageSize)
            head = 0
        } else if head >= 4096, head * 2 >= buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
    }
}
