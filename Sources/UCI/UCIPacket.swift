
/// Largest payload of one control packet: its length field is a single octet.
let maxControlPayload = 255
/// Largest payload of one data packet: its length field is two octets.
let maxDataPacketPayload = 0xFFFF
let packetHeaderSize = 4

/// One packet on the wire (one segment).
///
/// Control packets (MT 1-3): octet 0 = MT|PBF|GID, octet 1 = OID (6 bits), octet 2 RFU,
/// octet 3 = payload length. Data packets (MT 0): octet 0 = MT|PBF|DPF, octet 1 RFU,
/// octets 2-3 = payload length, little-endian.
package struct UCIPacket: Hashable, Sendable {
    package var messageType: MessageType
    /// PBF == 0: this packet completes its message.
    package var isFinalSegment: Bool
    /// GID for control packets, DPF for data packets (4 bits).
    package var groupID: UInt8
    /// OID (6 bits) for control packets; 0 for data packets.
    package var opcodeID: UInt8
    package var payload: [UInt8]

    package init(
        messageType: MessageType, isFinalSegment: Bool = true, groupID: UInt8, opcodeID: UInt8,
        payload: [UInt8]
    ) {
        self.messageType = messageType
        self.isFinalSegment = isFinalSegment
        self.groupID = groupID
        self.opcodeID = opcodeID
        self.payload = payload
    }

    /// The largest payload this packet's header can describe.
    var payloadLimit: Int { messageType == .data ? maxDataPacketPayload : maxControlPayload }

    /// Header plus payload. The payload must fit the header's length field
    /// (255 for control, 65535 for data); `UCIMessage.packets()` guarantees that.
    package func encoded() -> [UInt8] {
        precondition(payload.count <= payloadLimit, "UCI packet payload exceeds its length field")
        let octet0 = messageType.rawValue << 5 | (isFinalSegment ? 0 : 0x10) | groupID & 0x0F
        var bytes: [UInt8]
        if messageType == .data {
            bytes = [octet0, 0, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)]
        } else {
            bytes = [octet0, opcodeID & 0x3F, 0, UInt8(payload.count)]
        }
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// Parses one packet from the front of `bytes`.
    ///
    /// Returns nil if more bytes are needed; otherwise the packet and how many bytes it used.
    /// Throws `.invalidMessageType` as soon as the first octet shows a reserved MT (4...7).
    package static func parse(_ bytes: ArraySlice<UInt8>) throws(UCIError) -> (packet: UCIPacket, consumed: Int)? {
        var storage: [UInt8] = []
        return try parse(bytes, reusing: &storage)
    }

    /// The same, the payload copied into `storage`'s memory (taken, and left empty) when the
    /// packet is whole: a decoder that keeps its messages' storage copies without allocating.
    package static func parse(_ bytes: ArraySlice<UInt8>, reusing storage: inout [UInt8]) throws(UCIError) -> (packet: UCIPacket, consumed: Int)? {
        guard let octet0 = bytes.first else { return nil }
        guard let type = MessageType(rawValue: octet0 >> 5) else {
            throw .invalidMessageType(octet0 >> 5)
        }
        guard bytes.count >= packetHeaderSize else { return nil }
        let start = bytes.startIndex
        let length = type == .data
            ? Int(bytes[start + 2]) | Int(bytes[start + 3]) << 8
            : Int(bytes[start + 3])
        guard bytes.count >= packetHeaderSize + length else { return nil }
        let payloadStart = start + packetHeaderSize
        var payload: [UInt8] = []
        swap(&payload, &storage)
        payload.removeAll(keepingCapacity: true)
        payload.append(contentsOf: bytes[payloadStart..<payloadStart + length])
        let packet = UCIPacket(
            messageType: type,
            isFinalSegment: octet0 & 0x10 == 0,
            groupID: octet0 & 0x0F,
            opcodeID: type == .data ? 0 : bytes[start + 1] & 0x3F,
            payload: payload)
        return (packet, packetHeaderSize + length)
    }
}
