/// Messages of the peer channel (an L2CAP LE credit-based channel on real radios, the virtual
/// air in the demo). Every message is one frame:
///
/// `version u8 (1) | type u8 | length u16 LE | payload[length]`, payload at most `maxPayload` bytes.
///
/// The flow: the initiator (lower peer id) sends `hello` and `rangingParameters`; the responder
/// sends `hello`, starts its UWB session and answers `parametersAccepted`; the initiator then
/// starts its own. After a bump either side sends `card` and the other joins with its own; the
/// UWB controller decides each profile drop (docs/PROTOCOL.md): it acknowledges the controlee's
/// card with `cardAck` only once it holds the ack of its own, or ends the drop with `cardDecline`.
/// A side reports the bump only when it holds the peer's card and the ack of its own.
public enum PeerMessage: Sendable, Equatable {
    case hello(Hello)
    case rangingParameters(RangingParameters)
    case parametersAccepted(sessionID: UInt32)
    case card(bumpID: UInt32, cardJSON: String)
    case cardAck(bumpID: UInt32)
    case goodbye
    /// This profile drop will not complete: no `bump` for it on either side.
    case cardDecline(bumpID: UInt32)
    /// The sender's radio has no ranging session to spare for this peer now; it closes the link.
    /// The initiator connects again after this long, or sooner once the peer's signal is stronger.
    case busy(retryAfterMilliseconds: UInt16)

    public static let version: UInt8 = 1
    public static let headerSize = 4
    /// Fits one L2CAP SDU comfortably (the CoC MTU we ask for is 512 on real radios).
    public static let maxPayload = 512
    public static let maxNameBytes = 32
    public static let maxCardBytes = 400

    public struct Hello: Sendable, Equatable {
        public var peerID: PeerID
        public var group: UInt16
        public var name: String
        public init(peerID: PeerID, group: UInt16, name: String) {
            self.peerID = peerID
            self.group = group
            self.name = name
        }
    }

    /// Out-of-band ranging parameters chosen by the controller. STS values are random per
    /// session, so a bystander who reads adverts cannot range with either side.
    public struct RangingParameters: Sendable, Equatable {
        public var sessionID: UInt32
        public var channel: UInt8
        public var preambleCodeIndex: UInt8
        public var controllerAddress: UInt16
        public var controleeAddress: UInt16
        public var vendorID: UInt16
        public var staticSTSIV: [UInt8]
        public var rangingIntervalMilliseconds: UInt16
        /// Set when the controller puts this controlee into a one-to-many session (several
        /// controlees, docs/PROTOCOL.md): the session's slots per ranging round, which the
        /// controlee configures alike. Nil for a one-to-one session, and then not on the wire.
        public var oneToManySlots: UInt8?

        public init(
            sessionID: UInt32, channel: UInt8, preambleCodeIndex: UInt8, controllerAddress: UInt16,
            controleeAddress: UInt16, vendorID: UInt16, staticSTSIV: [UInt8], rangingIntervalMilliseconds: UInt16,
            oneToManySlots: UInt8? = nil
        ) {
            self.sessionID = sessionID
            self.channel = channel
            self.preambleCodeIndex = preambleCodeIndex
            self.controllerAddress = controllerAddress
            self.controleeAddress = controleeAddress
            self.vendorID = vendorID
            self.staticSTSIV = staticSTSIV
            self.rangingIntervalMilliseconds = rangingIntervalMilliseconds
            self.oneToManySlots = oneToManySlots
        }
    }

    private enum Kind: UInt8 {
        case hello = 1, rangingParameters = 2, parametersAccepted = 3, card = 4, cardAck = 5, goodbye = 6, cardDecline = 7, busy = 8
    }

    public func encoded() -> [UInt8] {
        var payload: [UInt8] = []
        let kind: Kind
        switch self {
        case .hello(let hello):
            kind = .hello
            payload.appendLE(hello.peerID.rawValue)
            payload.appendLE(hello.group)
            let name = Array(hello.name.utf8.prefix(Self.maxNameBytes))
            payload.append(UInt8(name.count))
            payload += name
        case .rangingParameters(let p):
            kind = .rangingParameters
            payload.appendLE(p.sessionID)
            payload.append(p.channel)
            payload.append(p.preambleCodeIndex)
            payload.appendLE(p.controllerAddress)
            payload.appendLE(p.controleeAddress)
            payload.appendLE(p.vendorID)
            precondition(p.staticSTSIV.count == 6, "STATIC_STS_IV is 6 bytes")
            payload += p.staticSTSIV
            payload.appendLE(p.rangingIntervalMilliseconds)
            if let slots = p.oneToManySlots { payload.append(slots) }
        case .parametersAccepted(let sessionID):
            kind = .parametersAccepted
            payload.appendLE(sessionID)
        case .card(let bumpID, let cardJSON):
            kind = .card
            payload.appendLE(bumpID)
            let card = Array(cardJSON.utf8)
            precondition(card.count <= Self.maxCardBytes, "profile cards are validated on load")
            payload.appendLE(UInt16(card.count))
            payload += card
        case .cardAck(let bumpID):
            kind = .cardAck
            payload.appendLE(bumpID)
        case .goodbye:
            kind = .goodbye
        case .cardDecline(let bumpID):
            kind = .cardDecline
            payload.appendLE(bumpID)
        case .busy(let retryAfter):
            kind = .busy
            payload.appendLE(retryAfter)
        }
        var frame: [UInt8] = [Self.version, kind.rawValue]
        frame.appendLE(UInt16(payload.count))
        return frame + payload
    }

    /// Decodes exactly one frame (one SDU). Anything a hostile peer can send yields an error.
    public init(frame: [UInt8]) throws(PeerProtocolError) {
        var reader = ByteReader(frame, context: "frame")
        let version = try reader.u8("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let rawKind = try reader.u8("type")
        let length = Int(try reader.uint(UInt16.self, "length"))
        guard length <= Self.maxPayload else { throw .tooLarge(field: "payload", size: length, limit: Self.maxPayload) }
        guard let kind = Kind(rawValue: rawKind) else { throw .unknownMessageType(rawKind) }
        var body = ByteReader(try reader.take(length, "payload"), context: "\(kind)")
        try reader.expectEnd()

        switch kind {
        case .hello:
            let peerID = PeerID(try body.uint(UInt64.self, "peer_id"))
            let group = try body.uint(UInt16.self, "group")
            let nameLength = Int(try body.u8("name_length"))
            guard nameLength <= Self.maxNameBytes else {
                throw .tooLarge(field: "name", size: nameLength, limit: Self.maxNameBytes)
            }
            let name = try Self.text(body.take(nameLength, "name"), field: "name")
            self = .hello(Hello(peerID: peerID, group: group, name: name))
        case .rangingParameters:
            self = .rangingParameters(
                RangingParameters(
                    sessionID: try body.uint(UInt32.self, "session_id"),
                    channel: try body.u8("channel"),
                    preambleCodeIndex: try body.u8("preamble_code_index"),
                    controllerAddress: try body.uint(UInt16.self, "controller_address"),
                    controleeAddress: try body.uint(UInt16.self, "controlee_address"),
                    vendorID: try body.uint(UInt16.self, "vendor_id"),
                    staticSTSIV: Array(try body.take(6, "static_sts_iv")),
                    rangingIntervalMilliseconds: try body.uint(UInt16.self, "ranging_interval"),
                    oneToManySlots: body.remaining == 0 ? nil : try body.u8("one_to_many_slots")))
        case .parametersAccepted:
            self = .parametersAccepted(sessionID: try body.uint(UInt32.self, "session_id"))
        case .card:
            let bumpID = try body.uint(UInt32.self, "bump_id")
            let cardLength = Int(try body.uint(UInt16.self, "card_length"))
            guard cardLength <= Self.maxCardBytes else {
                throw .tooLarge(field: "card", size: cardLength, limit: Self.maxCardBytes)
            }
            self = .card(bumpID: bumpID, cardJSON: try Self.text(body.take(cardLength, "card"), field: "card"))
        case .cardAck:
            self = .cardAck(bumpID: try body.uint(UInt32.self, "bump_id"))
        case .goodbye:
            self = .goodbye
        case .cardDecline:
            self = .cardDecline(bumpID: try body.uint(UInt32.self, "bump_id"))
        case .busy:
            self = .busy(retryAfterMilliseconds: try body.uint(UInt16.self, "retry_after"))
        }
        try body.expectEnd()
    }

    private static func text(_ bytes: ArraySlice<UInt8>, field: String) throws(PeerProtocolError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidText(field: field) }
        return text
    }
}
