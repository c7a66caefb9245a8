import BLE
import Crypto
import Foundation
import PeerProtocol
import Testing

@testable import PeerSecurity

func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// Runs the handshake with the vectors' ephemeral keys; returns both sides' keys and messages.
func vectorHandshake(_ v: Vectors, responderKey: GroupKey? = nil) throws -> (
    message1: [UInt8], message2: [UInt8], initiator: TransportKeys, responder: TransportKeys
) {
    var initiator = NoiseHandshake(
        role: .initiator, psk: KeySchedule.handshakePSK(v.groupKey),
        ephemeral: try .init(rawRepresentation: v.bytes("handshake", "initiator_ephemeral")))
    var responder = NoiseHandshake(
        role: .responder, psk: KeySchedule.handshakePSK(responderKey ?? v.groupKey),
        ephemeral: try .init(rawRepresentation: v.bytes("handshake", "responder_ephemeral")))
    let message1 = initiator.writeInitiation()
    _ = try responder.readInitiation(message1)
    let (message2, responderKeys) = try responder.writeResponse()
    let (_, initiatorKeys) = try initiator.readResponse(message2)
    return (message1, message2, initiatorKeys, responderKeys)
}

@Suite("peer protocol v2 against independent implementations")
struct VectorTests {
    let v: Vectors

    init() throws { v = try Vectors() }

    @Test func keySchedule() {
        #expect(v.groupKey.fingerprint == v.section("key_schedule")["fingerprint"] as? String)
        #expect(KeySchedule.handshakePSK(v.groupKey) == v.bytes("key_schedule", "handshake_psk"))
        let (encryption, authentication) = KeySchedule.advertKeys(v.groupKey)
        #expect(encryption + authentication == v.bytes("key_schedule", "advert_keys"))
    }

    /// The identity resolving key of a peer id, and a resolvable private address made with it,
    /// by `cryptography`'s HKDF and AES from the documented derivation.
    @Test func identityResolvingKeyAndItsAddress() throws {
        let section = v.section("identity_resolving_key")
        let peer = PeerID(try #require(UInt64(section["peer_id"] as? String ?? "", radix: 16)))
        let irk = KeySchedule.identityResolvingKey(v.groupKey, peer: peer)
        #expect(irk == v.bytes("identity_resolving_key", "irk"))
        let prand = try #require(UInt32(section["prand"] as? String ?? "", radix: 16))
        let address = ResolvablePrivateAddress.address(irk: irk, prand: prand)
        #expect(address.bytes == v.bytes("identity_resolving_key", "address"))
        #expect(ResolvablePrivateAddress.resolves(address, irk: irk))
        #expect(!ResolvablePrivateAddress.resolves(address, irk: KeySchedule.identityResolvingKey(v.groupKey, peer: PeerID(peer.rawValue + 1))))
    }

    @Test func handshakeMatchesNoiseprotocol() throws {
        let run = try vectorHandshake(v)
        #expect(run.message1 == v.bytes("handshake", "message1"))
        #expect(run.message2 == v.bytes("handshake", "message2"))
        #expect(SecureFrame.handshakeInitiation(run.message1).encoded() == v.bytes("handshake", "frame1"))
        #expect(SecureFrame.handshakeResponse(run.message2).encoded() == v.bytes("handshake", "frame2"))
        #expect(run.initiator.handshakeHash == v.bytes("handshake", "handshake_hash"))
        #expect(run.initiator.sending == v.bytes("handshake", "initiator_to_responder"))
        #expect(run.initiator.receiving == v.bytes("handshake", "responder_to_initiator"))
        #expect(run.responder.sending == run.initiator.receiving && run.responder.receiving == run.initiator.sending)
        #expect(run.initiator.rangingSecret == v.bytes("handshake", "ranging_secret"))
        #expect(run.responder.rangingSecret == run.initiator.rangingSecret)
    }

    @Test func rangingKeys() throws {
        let section = v.section("ranging_keys")
        let keys = RangingKeys(
            rangingSecret: v.bytes("handshake", "ranging_secret"), sessionID: UInt32(section["session_id"] as? Int ?? 0))
        #expect(Int(keys.vendorID) == section["vendor_id"] as? Int)
        #expect(keys.staticSTSIV == v.bytes("ranging_keys", "static_sts_iv"))
        #expect(keys.sessionKey == v.bytes("ranging_keys", "session_key"))
    }

    @Test func sealedFrames() throws {
        let run = try vectorHandshake(v)
        var channels = (i2r: SecureChannel(keys: run.initiator), r2i: SecureChannel(keys: run.responder))
        var readers = (i2r: SecureChannel(keys: run.responder), r2i: SecureChannel(keys: run.initiator))
        let frames = try #require(v.json["frames"] as? [[String: Any]])
        #expect(frames.count == 5)
        for entry in frames {
            let inner = hex(entry["inner"] as? String ?? ""), expected = hex(entry["sealed"] as? String ?? "")
            let sequence = entry["sequence"] as? Int ?? -1
            let toResponder = entry["direction"] as? String == "i2r"
            // The inner frame as our encoder writes it: the documented v2 layout.
            let message = try PeerMessage(frame: inner, version: .v2)
            if case .rangingParameters(let p) = message, p.oneToManySlots == nil {
                #expect(p.vendorID == 0 && p.staticSTSIV == [0, 0, 0, 0, 0, 0], "one-to-one parameters carry no STS values")
            }
            #expect(message.encoded(version: .v2) == inner, "\(entry["what"] ?? "")")
            if case .hello(let hello) = message {
                // bits 0-2 as docs/PROTOCOL.md numbers them: one-to-many, provisioned STS, round hopping
                #expect(hello.capabilities == [.oneToMany, .provisionedSTS, .roundHopping])
            }
            // Sequence numbers the vectors skip stand for frames lost on the way.
            var sealed: [UInt8]
            repeat {
                sealed = toResponder ? channels.i2r.seal(message) : channels.r2i.seal(message)
            } while sequenceOf(try SecureFrame(frame: sealed)) < UInt64(sequence)
            #expect(sealed == expected, "\(entry["what"] ?? "")")
            let opened = toResponder ? try readers.i2r.open(SecureFrame(frame: expected)) : try readers.r2i.open(SecureFrame(frame: expected))
            #expect(opened == message)
        }
    }

    @Test func privateAdvert() throws {
        let section = v.section("private_advert")
        let advert = Advertisement(
            group: 0, peerID: PeerID(UInt64(section["peer_id"] as? String ?? "", radix: 16) ?? 0),
            uwbShortAddress: UInt16(section["uwb_address"] as? Int ?? 0),
            capabilities: .init(rawValue: UInt8(section["capabilities"] as? Int ?? 0)), psm: UInt8(section["psm"] as? Int ?? 0))
        let data = PrivateAdvert(key: v.groupKey).advertisingData(for: advert, nonce: v.bytes("private_advert", "nonce"))
        #expect(data == v.bytes("private_advert", "data"))
        #expect(data.count == 31, "a legacy advert, Flags included")
        #expect(PrivateAdvert(key: v.groupKey).open(data) == advert)
        // The vector's capabilities, bit by bit as docs/PROTOCOL.md numbers them: UWB, one-to-many, round hopping.
        #expect(advert.capabilities == [.uwb, .oneToMany, .roundHopping])
    }
}

private func sequenceOf(_ frame: SecureFrame) -> UInt64 {
    if case .sealed(let sequence, _) = frame { sequence } else { 0 }
}
