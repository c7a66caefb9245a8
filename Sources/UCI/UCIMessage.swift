/// A whole message after reassembly (or before segmentation).
package struct UCIMessage: Hashable, Sendable {
    package var messageType: MessageType
    /// GID for control messages, DPF for data messages.
    package var groupID: UInt8
    /// OID for control messages; 0 for data messages.
    package var opcodeID: UInt8
    package var payload: [UInt8]

    package init(messageType: MessageType, groupID: UInt8, opcodeID: UInt8, payload: [UInt8]) {
        self.messageType = messageType
        self.groupID = groupID
        self.opcodeID = opcodeID
        self.payload = payload
    }

    /// Splits into wire packets: control payloads in chunks of at most 255 octets,
    /// data payloads in chunks of at most `maxDataPayload` (the UWBS's advertised
    /// SUPPORTED_MAX_DATA_PACKET_PAYLOAD_SIZE, clamped to 1...65535).
    /// PBF is set on all but the last packet. An empty payload gives one packet.
    package func packets(maxDataPayload: Int = 4096) -> [UCIPacket] {
        let chunk = messageType == .data
            ? min(max(maxDataPayload, 1), maxDataPacketPayload)
            : maxControlPayload
        var packets: [UCIPacket] = []
        var offset = 0
        repeat {
            let end = min(offset + chunk, payload.count)
            packets.append(UCIPacket(
                messageType: messageType, isFinalSegment: end == payload.count,
                groupID: groupID, opcodeID: opcodeID, payload: Array(payload[offset..<end])))
            offset = end
        } while offset < payload.count
        return packets
    }

    /// All packets' bytes concatenated, ready to write to a byte-stream transport.
    package func encoded() -> [UInt8] {
        packets().flatMap { $0.encoded() }
    }
}
