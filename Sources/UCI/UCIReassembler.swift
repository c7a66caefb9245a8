/// Joins segments (PBF) into messages.
///
/// Like AOSP's `PacketDefrager`, control and data messages reassemble independently (a data
/// message may be interleaved with control packets), and a segment whose MT/GID/OID differs
/// from the message being reassembled is rejected. After an error the partial message is
/// dropped so the next packet starts fresh; the one refinement is that the remaining segments
/// of a message already rejected as too large are skipped silently, so its tail is never
/// mistaken for a message of its own.
package struct UCIReassembler: Sendable {
    private struct Partial: Sendable {
        var messageType: MessageType
        var groupID: UInt8
        var opcodeID: UInt8
        var payload: [UInt8]
        /// Set once the message exceeded the limit: its later segments are dropped.
        var isDiscarding = false

        func matches(_ packet: UCIPacket) -> Bool {
            packet.messageType == messageType && packet.groupID == groupID && packet.opcodeID == opcodeID
        }
    }

    private let maxMessageSize: Int
    private var control: Partial?
    private var data: Partial?

    package init(maxMessageSize: Int = 4096) {
        self.maxMessageSize = maxMessageSize
    }

    /// Adds one packet; returns the message it completes, if any.
    package mutating func push(_ packet: UCIPacket) throws(UCIError) -> UCIMessage? {
        if packet.messageType == .data {
            return try Self.push(packet, into: &data, limit: maxMessageSize)
        }
        return try Self.push(packet, into: &control, limit: maxMessageSize)
    }

    private static func push(_ packet: UCIPacket, into slot: inout Partial?, limit: Int) throws(UCIError) -> UCIMessage? {
        guard packet.payload.count <= packet.payloadLimit else {
            slot = nil
            throw .payloadTooLong(length: packet.payload.count, limit: packet.payloadLimit)
        }
        // A message in one packet (nearly all of them) keeps the packet's payload: no copy.
        if slot == nil, packet.isFinalSegment {
            guard packet.payload.count <= limit else { throw .messageTooLarge(size: packet.payload.count, limit: limit) }
            return UCIMessage(messageType: packet.messageType, groupID: packet.groupID, opcodeID: packet.opcodeID, payload: packet.payload)
        }
        var partial: Partial
        if let existing = slot {
            guard existing.matches(packet) else {
                slot = nil
                if existing.isDiscarding {
                    // The oversized message ended without its final segment; start over.
                    return try push(packet, into: &slot, limit: limit)
                }
                throw .segmentMismatch(
                    expected: label(existing.messageType, existing.groupID, existing.opcodeID),
                    got: label(packet.messageType, packet.groupID, packet.opcodeID))
            }
            partial = existing
        } else {
            partial = Partial(
                messageType: packet.messageType, groupID: packet.groupID,
                opcodeID: packet.opcodeID, payload: [])
        }
        if partial.isDiscarding {
            slot = packet.isFinalSegment ? nil : partial
            return nil
        }
        let size = partial.payload.count + packet.payload.count
        guard size <= limit else {
            partial.payload = []
            partial.isDiscarding = true
            slot = packet.isFinalSegment ? nil : partial
            throw .messageTooLarge(size: size, limit: limit)
        }
        partial.payload.append(contentsOf: packet.payload)
        guard packet.isFinalSegment else {
            slot = partial
            return nil
        }
        slot = nil
        return UCIMessage(
            messageType: partial.messageType, groupID: partial.groupID,
            opcodeID: partial.opcodeID, payload: partial.payload)
    }

    /// "response GID 0x01 OID 0x03" or "data DPF 0x02": names a message header in errors.
    private static func label(_ type: MessageType, _ gid: UInt8, _ oid: UInt8) -> String {
        type == .data ? "data DPF \(hex(gid))" : "\(type) GID \(hex(gid)) OID \(hex(oid))"
    }
}
