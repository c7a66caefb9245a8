import Crypto
import Foundation
import PeerProtocol
import Testing

@testable import PeerSecurity

@Suite("peer protocol v2: what must be refused")
struct SecurityTests {
    let v: Vectors

    init() throws { v = try Vectors() }

    @Test func aPeerWithoutTheKeyFailsTheHandshakeOnBothSides() throws {
        let outsider = try GroupKey(bytes: [UInt8](repeating: 7, count: 32))
        #expect(throws: HandshakeError.failed) { _ = try vectorHandshake(v, responderKey: outsider) }
        // And the other way round: a responder with the key refuses an outsider's first message.
        var initiator = NoiseHandshake(role: .initiator, psk: KeySchedule.handshakePSK(outsider), ephemeral: .init())
        var responder = NoiseHandshake(role: .responder, psk: KeySchedule.handshakePSK(v.groupKey), ephemeral: .init())
        #expect(throws: HandshakeError.failed) { _ = try responder.readInitiation(initiator.writeInitiation()) }
    }

    @Test func anAlteredHandshakeMessageFails() throws {
        var initiator = NoiseHandshake(role: .initiator, psk: KeySchedule.handshakePSK(v.groupKey), ephemeral: .init())
        var message = initiator.writeInitiation()
        message[40] ^= 0x01
        var responder = NoiseHandshake(role: .responder, psk: KeySchedule.handshakePSK(v.groupKey), ephemeral: .init())
        #expect(throws: HandshakeError.failed) { _ = try responder.readInitiation(message) }
        var short = NoiseHandshake(role: .responder, psk: KeySchedule.handshakePSK(v.groupKey), ephemeral: .init())
        #expect(throws: HandshakeError.self) { _ = try short.readInitiation(Array(message.prefix(40))) }
    }

    @Test func tamperedReplayedReorderedAndTruncatedFramesAreRejected() throws {
        let run = try vectorHandshake(v)
        var sender = SecureChannel(keys: run.initiator)
        var receiver = SecureChannel(keys: run.responder)
        let first = sender.seal(.cardAck(bumpID: 1))
        let second = sender.seal(.cardAck(bumpID: 2))
        let third = sender.seal(.card(bumpID: 3, cardJSON: #"{"name":"Alice"}"#))

        #expect(try receiver.open(SecureFrame(frame: second)) == .cardAck(bumpID: 2))  // the first was lost: fine
        #expect(throws: SecureChannelError.replayed(sequence: 1, last: 1)) { try receiver.open(SecureFrame(frame: second)) }
        #expect(throws: SecureChannelError.replayed(sequence: 0, last: 1)) { try receiver.open(SecureFrame(frame: first)) }
        for index in [4, 11, 12, third.count - 1] {  // length, sequence, ciphertext, tag
            var tampered = third
            tampered[index] ^= 0x80
            #expect(throws: (any Error).self) { try receiver.open(SecureFrame(frame: tampered)) }
        }
        var relabelled = third  // the same box under another sequence number
        relabelled[4] = 9
        #expect(throws: SecureChannelError.notAuthentic(sequence: 9)) { try receiver.open(SecureFrame(frame: relabelled)) }
        #expect(throws: PeerProtocolError.self) { try SecureFrame(frame: Array(third.dropLast(3))) }
        // A frame of the other direction (reflected back at its sender) does not open either.
        var reflected = SecureChannel(keys: run.initiator)
        #expect(throws: SecureChannelError.notAuthentic(sequence: 2)) { try reflected.open(SecureFrame(frame: third)) }
        // After all that, the honest frame still opens.
        #expect(try receiver.open(SecureFrame(frame: third)) == .card(bumpID: 3, cardJSON: #"{"name":"Alice"}"#))
    }

    @Test func advertsOfTwoPeriodsCannotBeLinkedWithoutTheKey() throws {
        let key = v.groupKey
        let advert = Advertisement(group: 0, peerID: PeerID(42), uwbShortAddress: 0x1234, capabilities: [.uwb, .oneToMany], psm: 0x85)
        let first = PrivateAdvert(key: key).advertisingData(for: advert, nonce: [1, 2, 3, 4, 5])
        let second = PrivateAdvert(key: key).advertisingData(for: advert, nonce: [9, 8, 7, 6, 5])
        // Only the constant header (Flags, length, type, company id, magic, version) is shared:
        // no byte that identifies the rig stays the same from one period to the next.
        let header = 3 + 1 + 1 + 2 + 2 + 1
        #expect(first.prefix(header) == second.prefix(header))
        let differing = zip(first.dropFirst(header), second.dropFirst(header)).filter { $0 != $1 }.count
        #expect(differing >= 18, "\(differing) of 21 bytes differ")
        // Members resolve both to the same peer; another event's key resolves neither.
        #expect(PrivateAdvert(key: key).open(first) == advert && PrivateAdvert(key: key).open(second) == advert)
        let other = try GroupKey(bytes: [UInt8](repeating: 1, count: 32))
        #expect(PrivateAdvert(key: other).open(first) == nil && PrivateAdvert(key: other).open(second) == nil)
        #expect(PrivateAdvert.isPresent(in: first))
        // A v1 reader ignores v2 adverts rather than misreading them.
        #expect(try Advertisement.find(in: first) == nil)
        var forged = first
        forged[20] ^= 1
        #expect(PrivateAdvert(key: key).open(forged) == nil)
    }

    /// An input the fuzzer reported (a v2-shaped advert with garbage nonce, body and tag): opens to nothing.
    @Test func aForgedV2AdvertOpensToNothing() throws {
        let data = Array(Data(base64Encoded: "AgEGG////05C/////wL/W////3R0dHR0dHR0dHR0AgEGG////05CAhQAMBXBywl0//90dHR0dHR0dHR0dHR0")!)
        #expect(PrivateAdvert(key: v.groupKey).open(data) == nil)
        #expect(PrivateAdvert.isPresent(in: data))
    }

    @Test func groupKeyText() throws {
        let key = GroupKey.generate()
        #expect(try GroupKey(text: key.text + "\n") == key)
        #expect(key.text.count == 64)
        #expect(!key.description.contains(key.text.prefix(8)))
        #expect(throws: GroupKeyError.notHex(length: 5)) { try GroupKey(text: "hello") }
        #expect(throws: GroupKeyError.notHex(length: 64)) { try GroupKey(text: String(repeating: "g", count: 64)) }
    }
}
