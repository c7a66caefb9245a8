import BLE
import Crypto
import PeerProtocol
import PeerSecurity
import Testing

@testable import Bridge

/// Each link's security as the node sees it: what a keyed rig does with the first frames a
/// peer sends, honest or not.
@Suite struct PeerChannelsTests {
    static let key = try! GroupKey(bytes: Array(repeating: 0x33, count: 32))

    static func channels(key: GroupKey? = key, allowInsecure: Bool = false, seed: UInt8 = 1) -> PeerChannels {
        var settings = PeerSecuritySettings()
        settings.groupKey = key
        settings.allowInsecurePeers = allowInsecure
        settings.keySeed = Array(repeating: seed, count: 32)
        return PeerChannels(settings: settings)
    }

    static let hello = PeerMessage.hello(.init(peerID: PeerID(1), group: 1, name: "v1 rig"))

    @Test func aKeyedRigRefusesAV1PeerUnlessAllowed() throws {
        guard case .refused(let reason) = Self.channels().receive(Self.hello.encoded(), on: 1) else {
            Issue.record("a v1 hello got through")
            return
        }
        #expect(reason.contains("allowInsecurePeers"))
        guard case .message(let message) = Self.channels(allowInsecure: true).receive(Self.hello.encoded(), on: 1) else {
            Issue.record("allowInsecurePeers did not let the v1 hello through")
            return
        }
        #expect(message == Self.hello)
    }

    @Test func aRigWithoutAKeyRefusesAV2Peer() throws {
        let initiator = Self.channels()
        let first = try #require(initiator.openOutgoing(7, peerVersion: .v2, now: 0))
        guard case .refused(let reason) = Self.channels(key: nil).receive(first, on: 1) else {
            Issue.record("a keyless rig answered a handshake")
            return
        }
        #expect(reason.contains("no event key"))
    }

    @Test func anOutsiderFailsTheHandshakeAndTheMembersGetThrough() throws {
        let outsider = Self.channels(key: try GroupKey(bytes: Array(repeating: 0x44, count: 32)))
        guard case .refused(let reason) = Self.channels().receive(try #require(outsider.openOutgoing(7, peerVersion: .v2, now: 0)), on: 1) else {
            Issue.record("an outsider's handshake was answered")
            return
        }
        #expect(reason.contains("handshake failed"))

        let (initiator, responder) = (Self.channels(), Self.channels())
        let first = try #require(initiator.openOutgoing(7, peerVersion: .v2, now: 0))
        guard case .reply(let answer) = responder.receive(first, on: 9) else {
            Issue.record("no answer")
            return
        }
        // The answer was lost: the repeated first message gets the same answer, a new one is refused.
        #expect(initiator.repeats(now: 200, interval: 200).map(\.1) == [first])
        guard case .reply(let again) = responder.receive(first, on: 9) else {
            Issue.record("no second answer")
            return
        }
        #expect(again == answer)
        guard case .established = initiator.receive(answer, on: 7) else {
            Issue.record("not established")
            return
        }
        #expect(initiator.rangingSecret(7) == responder.rangingSecret(9) && initiator.rangingSecret(7) != nil)
        // Sealed both ways; frames that do not authenticate are discarded and the link stays.
        let sealed = try #require(initiator.frame(Self.hello, on: 7))
        #expect(!sealed.isEmpty && sealed[0] == 2)
        guard case .message(.hello(let hello)) = responder.receive(sealed, on: 9) else {
            Issue.record("sealed hello not opened")
            return
        }
        #expect(hello.peerID == PeerID(1) && hello.name == "v1 rig" && hello.group == 0, "v2 hellos name no group")
        var altered = try #require(initiator.frame(Self.hello, on: 7))
        altered[altered.count / 2] ^= 0x01
        let next = try #require(initiator.frame(Self.hello, on: 7))
        let hostile: [(String, [UInt8])] = [
            ("a replayed frame", sealed), ("an altered frame", altered), ("a frame cut short", Array(next.dropLast(3))),
            ("a v1 frame on a v2 link", Self.hello.encoded()), ("another handshake", try #require(Self.channels(seed: 2).openOutgoing(3, peerVersion: .v2, now: 0))),
        ]
        for (what, frame) in hostile {
            guard case .discarded = responder.receive(frame, on: 9) else {
                Issue.record("\(what) was not discarded")
                return
            }
        }
        guard case .message(.hello) = responder.receive(next, on: 9) else {
            Issue.record("the next honest frame did not open after the hostile ones")
            return
        }
        guard case .discarded = responder.receive(sealed, on: 9) else {
            Issue.record("an old frame was accepted after a newer one")
            return
        }
    }
}
