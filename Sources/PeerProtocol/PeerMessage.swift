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
package enum PeerMessage: Sendable, Equatable {
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

    /// The frame layouts: v1 (unencrypted channel) and v2 (inside a v2 sealed frame, see
    /// `SecureFrame`). Both share the header; `hello` and `rangingParameters` differ in v2.
    package enum Version: UInt8, Sendable, Comparable {
        case v1 = 1, v2 = 2
        package static func < (a: Version, b: Version) -> Bool { a.rawValue < b.rawValue }
    }

    package static let headerSize = 4
    /// Fits one L2CAP SDU comfortably (the CoC MTU we ask for is 512 on real radios).
    package static let maxPayload = 512
    package static let maxNameBytes = 32
    package static let maxCardBytes = 400

    /// What a peer says of itself. v1 names its group (membership by a visible number); v2
    /// drops it (membership is proven by the handshake) and says which protocol versions and
    /// capabilities the peer has instead.
    package struct Hello: Sendable, Equatable {
        package var peerID: PeerID
        /// v1 only; 0 when decoded from v2.
        package var group: UInt16
        package var name: String
        /// v2 only: the versions the sender speaks (bit n-1 for version n).
        package var versions: UInt8
        package var capabilities: Capabilities

        package init(peerID: PeerID, group: UInt16, name: String, versions: UInt8 = 0, capabilities: Capabilities = []) {
            self.peerID = peerID
            self.group = group
            self.name = name
            self.versions = versions
            self.capabilities = capabilities
        }
    }

    /// Features a v2 peer announces in `hello` (the advert carries the same bits).
    package struct Capabilities: OptionSet, Sendable, Equatable {
        package var rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Can range as a controlee in a one-to-many session (`rangingParameters`' slots).
        package static let oneToMany = Capabilities(rawValue: 1 << 0)
        /// In the controller's v2 `hello`: this session's STS is provisioned, keyed by the
        /// session key both sides derive (both boards support it: ours, and the controlee's as
        /// its advert says). Absent: static STS with derived vendor id and IV.
        package static let provisionedSTS = Capabilities(rawValue: 1 << 1)
        /// In the controller's v2 `hello`: this link's one-to-one sessions hop, FiRa round
        /// hopping (HOPPING_MODE 1) on both boards (ours, and the controlee's as its advert says),
        /// so that two sessions whose rounds meet on a shared channel meet in one block, not
        /// in every block until their clocks drift apart. Absent: HOPPING_MODE 0.
        package static let roundHopping = Capabilities(rawValue: 1 << 2)
    }

    /// Out-of-band ranging parameters chosen by the controller. STS values are random per
    /// session, so a bystander who reads adverts cannot range with either side.
    package struct RangingParameters: Sendable, Equatable {
        package var sessionID: UInt32
        package var channel: UInt8
        package var preambleCodeIndex: UInt8
        package var controllerAddress: UInt16
        package var controleeAddress: UInt16
        package var vendorID: UInt16
        package var staticSTSIV: [UInt8]
        package var rangingIntervalMilliseconds: UInt16
        /// Set when the controller puts this controlee into a one-to-many session (several
        /// controlees, docs/PROTOCOL.md): the session's slots per ranging round, which the
        /// controlee configures alike. Nil for a one-to-one session, and then not on the wire.
        package var oneToManySlots: UInt8?

        package init(
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

    /// The frame in `version`'s layout. In v2 a one-to-one `rangingParameters` leaves out the STS
    /// values (both sides derive them from the channel's secret); a one-to-many one carries the
    /// shared session's, which only the sealed channel ever sees.
    package func encoded(version: Version = .v1) -> [UInt8] {
        var payload: [UInt8] = []
        let kind: Kind
        switch self {
        case .hello(let hello):
            kind = .hello
            payload.appendLE(hello.peerID.rawValue)
            if version == .v1 {
                payload.appendLE(hello.group)
            } else {
                payload.append(hello.versions)
                payload.append(hello.capabilities.rawValue)
            }
            let name = Array(Self.truncatedName(hello.name).utf8)
            payload.append(UInt8(name.count))
            payload += name
        case .rangingParameters(let p):
            kind = .rangingParameters
            payload.appendLE(p.sessionID)
            payload.append(p.channel)
            payload.append(p.preambleCodeIndex)
            payload.appendLE(p.controllerAddress)
            payload.appendLE(p.controleeAddress)
            precondition(p.staticSTSIV.count == 6, "STATIC_STS_IV is 6 bytes")
            if version == .v1 {
                payload.appendLE(p.vendorID)
                payload += p.staticSTSIV
                payload.appendLE(p.rangingIntervalMilliseconds)
                if let slots = p.oneToManySlots { payload.append(slots) }
            } else {
                payload.appendLE(p.rangingIntervalMilliseconds)
                payload.append(p.oneToManySlots ?? 0)
                if p.oneToManySlots != nil {
                    payload.appendLE(p.vendorID)
                    payload += p.staticSTSIV
                }
            }
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
        var frame: [UInt8] = [version.rawValue, kind.rawValue]
        frame.appendLE(UInt16(payload.count))
        return frame + payload
    }

    /// The longest prefix of `name` that fits `maxNameBytes` of UTF-8 without splitting a
    /// character (cutting inside one would make the peer reject the whole `hello`).
    package static func truncatedName(_ name: String) -> String {
        var result = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            guard bytes + size <= maxNameBytes else { break }
            result.append(character)
            bytes += size
        }
        return result
    }

    /// Decodes exactly one frame (one SDU) of `version`'s layout. Anything a hostile peer can
    /// send yields an error. A v2 one-to-one `rangingParameters` decodes with zero STS values,
    /// which the receiver replaces with the ones it derives.
    package init(frame: [UInt8], version expected: Version = .v1) throws(PeerProtocolError) {
        var reader = ByteReader(frame, context: "frame")
        let version = try reader.u8("version")
        guard version == expected.rawValue else { throw .unsupportedVersion(version) }
        let rawKind = try reader.u8("type")
        let length = Int(try reader.uint(UInt16.self, "length"))
        guard length <= Self.maxPayload else { throw .tooLarge(field: "payload", size: length, limit: Self.maxPayload) }
        guard let kind = Kind(rawValue: rawKind) else { throw .unknownMessageType(rawKind) }
        var body = ByteReader(try reader.take(length, "payload"), context: "\(kind)")
        try reader.expectEnd()

        switch kind {
        case .hello:
            let peerID = PeerID(try body.uint(UInt64.self, "peer_id"))
            var hello = Hello(peerID: peerID, group: 0, name: "")
            if expected == .v1 {
                hello.group = try body.uint(UInt16.self, "group")
            } else {
                hello.versions = try body.u8("versions")
                hello.capabilities = Capabilities(rawValue: try body.u8("capabilities"))
            }
            let nameLength = Int(try body.u8("name_length"))
            guard nameLength <= Self.maxNameBytes else {
                throw .tooLarge(field: "name", size: nameLength, limit: Self.maxNameBytes)
            }
            hello.name = try Self.text(body.take(nameLength, "name"), field: "name")
            self = .hello(hello)
        case .rangingParameters:
            var p = RangingParameters(
                sessionID: try body.uint(UInt32.self, "session_id"),
                channel: try body.u8("channel"),
                preambleCodeIndex: try body.u8("preamble_code_index"),
                controllerAddress: try body.uint(UInt16.self, "controller_address"),
                controleeAddress: try body.uint(UInt16.self, "controlee_address"),
                vendorID: 0, staticSTSIV: [0, 0, 0, 0, 0, 0], rangingIntervalMilliseconds: 0)
            if expected == .v1 {
                p.vendorID = try body.uint(UInt16.self, "vendor_id")
                p.staticSTSIV = Array(try body.take(6, "static_sts_iv"))
                p.rangingIntervalMilliseconds = try body.uint(UInt16.self, "ranging_interval")
                p.oneToManySlots = body.remaining == 0 ? nil : try body.u8("one_to_many_slots")
            } else {
                p.rangingIntervalMilliseconds = try body.uint(UInt16.self, "ranging_interval")
                let slots = try body.u8("one_to_many_slots")
                if slots != 0 {
                    p.oneToManySlots = slots
                    p.vendorID = try body.uint(UInt16.self, "vendor_id")
                    p.staticSTSIV = Array(try body.take(6, "static_sts_iv"))
                }
            }
            self = .rangingParameters(p)
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
