import BLE
import Crypto
@testable import Bridge
import PeerSecurity
import Testing

// Issue 35 at 10 000 attempts a second: attackers open links to a rig and replay a captured
// handshake message 1 (valid: made with the event key) on each. What the rig refused or closed
// costs it no handshake and no memory, and the same message 1 is answered once.
@Suite struct NodeCoreHandshakeFloodTests {
    typealias Pair = CorePair

    /// A handshake message 1 made with the event key, from an ephemeral key of `seed`'s bytes:
    /// what a replayer captured and sends on every link it opens.
    static func initiation(seed: UInt8) throws -> [UInt8] {
        let ephemeral = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: seed, count: 32))
        var handshake = NoiseHandshake(role: .initiator, psk: KeySchedule.handshakePSK(Pair.eventKey), ephemeral: ephemeral)
        return SecureFrame.handshakeInitiation(handshake.writeInitiation()).encoded()
    }

    static func address(_ index: Int) -> BLEAddress {
        BLEAddress(bytes: [0x0F, 0x10, 0x0D, 0, UInt8(index >> 8), UInt8(index & 0xFF)])
    }

    static func sends(_ effects: [NodeEffect], on link: LinkID) -> Int {
        effects.count { if case .send(_, link) = $0 { true } else { false } }
    }

    /// A message 1 that arrives on a link R closed at admission (over the strangers' rate) is not
    /// read: no answer, no handshake state. Before, each one cost R a responder handshake (two
    /// X25519 operations) and kept its state for good, as the adapter reports no close of a link
    /// closed on our side: 70 % of a core and 2 MB a second at 10 000 links a second.
    @Test func aHandshakeOnALinkRefusedAtAdmissionIsNotRead() throws {
        let pair = Pair(secure: true)
        let message = try Self.initiation(seed: 0x35)
        let links = NodeCoreFloodTests.flood(pair, count: NodeCore.strangersAdmittedAtOnce + 50)
        let refused = Array(links.suffix(50))
        #expect(Set(pair.disconnects(.r)).isSuperset(of: refused))
        for link in refused {
            let answered = pair.feed(.r, .ble(.linkData(link, message)))
            #expect(Self.sends(answered, on: link) == 0, "link \(link) is not answered")
            #expect(pair.channels.r.rangingSecret(link) == nil, "link \(link) keeps no handshake state")
        }
        #expect(pair.openLinks(.r).isDisjoint(with: refused))
    }

    /// Links R closes itself (the hello timeout here) leave nothing behind, though no `linkClosed`
    /// comes for them: before, every link ever opened to R stayed in its table of open links.
    @Test func linksTheRigClosesLeaveNoState() throws {
        let pair = Pair(secure: true)
        let links = NodeCoreFloodTests.flood(pair, count: 64)
        for (index, link) in links.enumerated() {
            let answered = pair.feed(.r, .ble(.linkData(link, try Self.initiation(seed: UInt8(index + 1)))))
            #expect(Self.sends(answered, on: link) == 1, "an admitted link's handshake is answered")
        }
        #expect(pair.openLinks(.r) == Set(links))
        pair.advance(NodeCore.helloTimeoutMilliseconds)
        pair.tick([.r])
        #expect(Set(pair.disconnects(.r)) == Set(links))
        #expect(pair.openLinks(.r).isEmpty)
        #expect(links.allSatisfy { pair.channels.r.rangingSecret($0) == nil })
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
        #expect(pair.openLinks(.r) == Set([pair.link(.r)].compactMap { $0 }))
    }

    /// The same message 1 on a second link is a replay: refused before any work, and its address
    /// backed off at once, so the replayer's next links are closed before they are read. Before,
    /// R answered every copy (a handshake each) and held the link until the hello timeout.
    @Test func aReplayedHandshakeIsRefusedAndBacksItsAddressOff() throws {
        let pair = Pair(secure: true)
        let message = try Self.initiation(seed: 0x35)
        let (first, replayer) = (Self.address(1), Self.address(2))
        pair.feed(.r, .ble(.linkOpened(1_001, peer: first, initiatedLocally: false)))
        #expect(Self.sends(pair.feed(.r, .ble(.linkData(1_001, message))), on: 1_001) == 1)
        pair.feed(.r, .ble(.linkOpened(1_002, peer: replayer, initiatedLocally: false)))
        let replayed = pair.feed(.r, .ble(.linkData(1_002, message)))
        #expect(Self.sends(replayed, on: 1_002) == 0)
        #expect(replayed.contains(.disconnect(1_002)))
        #expect(pair.channels.r.rangingSecret(1_002) == nil)
        #expect(pair.feed(.r, .ble(.linkOpened(1_003, peer: replayer, initiatedLocally: false))).contains(.disconnect(1_003)), "backed off")
        pair.heard(.c)
        #expect(pair.isRanging(.c) && pair.isRanging(.r))
    }

    /// The cache of answered first messages keeps the latest `capacity` and no more.
    @Test func theReplayCacheKeepsTheLatestAnswersAndNoMore() {
        var cache = HandshakeReplayCache()
        func message(_ index: Int) -> [UInt8] {
            withUnsafeBytes(of: UInt64(index).littleEndian, Array.init) + [UInt8](repeating: 0, count: 40)
        }
        for index in 0...HandshakeReplayCache.capacity { cache.insert(message(index)) }
        #expect(!cache.contains(message(0)), "the oldest went")
        #expect(cache.contains(message(1)) && cache.contains(message(HandshakeReplayCache.capacity)))
        var tail = message(7)
        tail[HandshakeReplayCache.keySize] = 0xFF
        #expect(cache.contains(tail), "the ephemeral key names a message; what follows it does not")
    }
}
