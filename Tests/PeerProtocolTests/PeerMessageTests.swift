import Testing
@testable import PeerProtocol

@Suite struct PeerMessageTests {
    @Test func framesMatchTheDocumentedLayout() throws {
        #expect(PeerMessage.cardAck(bumpID: 0x0102_0304).encoded() == [0x01, 0x05, 0x04, 0x00, 0x04, 0x03, 0x02, 0x01])
        #expect(PeerMessage.goodbye.encoded() == [0x01, 0x06, 0x00, 0x00])
        #expect(PeerMessage.cardDecline(bumpID: 3).encoded() == [0x01, 0x07, 0x04, 0x00, 0x03, 0x00, 0x00, 0x00])
        #expect(PeerMessage.busy(retryAfterMilliseconds: 5000).encoded() == [0x01, 0x08, 0x02, 0x00, 0x88, 0x13])
        #expect(
            PeerMessage.hello(.init(peerID: PeerID(1), group: 7, name: "ab")).encoded() == [
                0x01, 0x01, 0x0D, 0x00, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 2, 0x61, 0x62,
            ])
        let parameters = PeerMessage.RangingParameters(
            sessionID: 42, channel: 9, preambleCodeIndex: 10, controllerAddress: 0x1234, controleeAddress: 0xDD5F,
            vendorID: 0x0708, staticSTSIV: [1, 2, 3, 4, 5, 6], rangingIntervalMilliseconds: 100)
        #expect(
            PeerMessage.rangingParameters(parameters).encoded() == [
                0x01, 0x02, 0x14, 0x00, 42, 0, 0, 0, 9, 10, 0x34, 0x12, 0x5F, 0xDD, 0x08, 0x07, 1, 2, 3, 4, 5, 6, 100, 0,
            ])
        // A one-to-many session adds its slots per round as one trailing octet.
        var shared = parameters
        shared.oneToManySlots = 19
        #expect(
            PeerMessage.rangingParameters(shared).encoded() == [
                0x01, 0x02, 0x15, 0x00, 42, 0, 0, 0, 9, 10, 0x34, 0x12, 0x5F, 0xDD, 0x08, 0x07, 1, 2, 3, 4, 5, 6, 100, 0, 19,
            ])
        #expect(try PeerMessage(frame: PeerMessage.rangingParameters(shared).encoded()) == .rangingParameters(shared))
        #expect(try PeerMessage(frame: PeerMessage.rangingParameters(parameters).encoded()) == .rangingParameters(parameters))
    }

    @Test func decodesWhatItEncodes() throws {
        let messages: [PeerMessage] = [
            .hello(.init(peerID: PeerID(.max), group: 1, name: "Zoë")),
            .parametersAccepted(sessionID: 9),
            .card(bumpID: 2, cardJSON: #"{"name":"A"}"#),
            .cardAck(bumpID: 2),
            .goodbye,
            .cardDecline(bumpID: 7),
            .busy(retryAfterMilliseconds: 30_000),
        ]
        for message in messages { #expect(try PeerMessage(frame: message.encoded()) == message) }
    }

    @Test func hostileFramesGetTypedErrors() {
        #expect(throws: PeerProtocolError.unsupportedVersion(2)) { try PeerMessage(frame: [2, 1, 0, 0]) }
        #expect(throws: PeerProtocolError.unknownMessageType(0x7F)) { try PeerMessage(frame: [1, 0x7F, 0, 0]) }
        #expect(throws: PeerProtocolError.tooLarge(field: "payload", size: 0xFFFF, limit: 512)) {
            try PeerMessage(frame: [1, 4, 0xFF, 0xFF])
        }
        #expect(throws: PeerProtocolError.truncated(field: "frame.payload", needed: 4, available: 2)) {
            try PeerMessage(frame: [1, 5, 4, 0, 1, 2])
        }
        #expect(throws: PeerProtocolError.trailingBytes(what: "frame", count: 1)) { try PeerMessage(frame: [1, 6, 0, 0, 9]) }
        #expect(throws: PeerProtocolError.trailingBytes(what: "cardAck", count: 1)) { try PeerMessage(frame: [1, 5, 5, 0, 1, 2, 3, 4, 5]) }
        #expect(throws: PeerProtocolError.invalidText(field: "name")) {
            try PeerMessage(frame: [1, 1, 12, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 0xFF])
        }
        #expect(throws: PeerProtocolError.tooLarge(field: "card", size: 401, limit: 400)) {
            try PeerMessage(frame: [1, 4, 6, 0, 1, 0, 0, 0, 0x91, 0x01])
        }
    }

    @Test func randomBytesNeverCrashTheDecoders() {
        var state: UInt64 = 0x9E37_79B9
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let valid = PeerMessage.card(bumpID: 1, cardJSON: #"{"n":1}"#).encoded()
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round.isMultiple(of: 2) {
                bytes = (0..<Int(next() % 40)).map { _ in UInt8(truncatingIfNeeded: next()) }
            } else {
                bytes = valid
                bytes[Int(next()) % bytes.count] = UInt8(truncatingIfNeeded: next())
            }
            _ = try? PeerMessage(frame: bytes)
            _ = try? Advertisement.find(in: bytes)
        }
    }
}
