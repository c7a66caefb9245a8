import BLE
import Crypto
import PeerProtocol
import PeerSecurity
import Synchronization

/// Every open peer-channel link's security state: the node core frames every message and reads
/// every frame through it, so a sealed frame's sequence number and the bytes handed to the
/// adapter always agree. Behind a lock because the node also draws advert nonces from it beside
/// the core (`BridgeNode.advertise`).
///
/// Per link: `plain` (v1), or the handshake as initiator, then `secure` with a `SecureChannel`.
/// A responder is secure as soon as it answers the first handshake message; it keeps that answer
/// so a repeated first message (the initiator lost the answer) gets it again. The same first
/// message on another link is a replay, refused before any work (`HandshakeReplayCache`).
final class PeerChannels: Sendable {
    private enum LinkState {
        case plain
        case initiating(NoiseHandshake, frame: [UInt8], sentAt: Int64)
        case secure(SecureChannel, answered: (message: [UInt8], reply: [UInt8])?)
    }

    private struct State {
        var links: [LinkID: LinkState] = [:]
        var answeredInitiations = HandshakeReplayCache()
    }

    /// What a received SDU means for the node.
    enum Received {
        case message(PeerMessage)
        /// A handshake frame to send back (the responder's answer, again if asked again).
        case reply([UInt8])
        /// The initiator's handshake completed: the link can carry messages now.
        case established
        /// A frame on an established v2 link that did not authenticate (altered, cut short,
        /// replayed, reordered): dropped like a frame lost on the air, the link stays. Anyone in
        /// radio range can send such frames; closing the link for them would let that one
        /// frame cut off honest peers.
        case discarded(String)
        case refused(String)
    }

    let settings: PeerSecuritySettings
    private let psk: [UInt8]?
    private let keySeed: [UInt8]
    private let state = Mutex(State())
    /// Separate from `state`: keys are drawn while it is held.
    private let keysDrawn = Atomic<UInt64>(0)

    /// `settings` as given, with the key seed drawn here when it has none (a capture records it).
    init(settings: PeerSecuritySettings) {
        let keySeed = settings.keySeed ?? SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        var resolved = settings
        resolved.keySeed = keySeed
        self.settings = resolved
        self.keySeed = keySeed
        psk = settings.groupKey.map(KeySchedule.handshakePSK)
    }

    var isSecure: Bool { psk != nil }

    /// 32 fresh secret bytes for `purpose` (ephemeral keys, advert nonces): HMAC-SHA256 of the
    /// node's key seed over the purpose and a counter.
    func draw(_ purpose: String) -> [UInt8] {
        let counter = keysDrawn.add(1, ordering: .relaxed).newValue
        var data = Array(purpose.utf8)
        data.appendLE(counter)
        return Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: keySeed)))
    }

    /// A fresh ephemeral key for one handshake. Any 32 bytes are an X25519 private key (clamped
    /// when used), so this cannot fail.
    private func newEphemeralKey() -> Curve25519.KeyAgreement.PrivateKey {
        try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: draw("ephemeral"))
    }

    // MARK: Opening links

    /// Our connection to a peer is up. A v2 peer gets the handshake's first message (returned,
    /// to send); a v1 peer's link is plain and ready at once (nil).
    func openOutgoing(_ link: LinkID, peerVersion: PeerMessage.Version, now: Int64) -> [UInt8]? {
        guard let psk, peerVersion == .v2 else {
            state.withLock { $0.links[link] = .plain }
            return nil
        }
        var handshake = NoiseHandshake(role: .initiator, psk: psk, ephemeral: newEphemeralKey())
        let frame = SecureFrame.handshakeInitiation(handshake.writeInitiation()).encoded()
        state.withLock { $0.links[link] = .initiating(handshake, frame: frame, sentAt: now) }
        return frame
    }

    /// Handshake first messages still unanswered after `interval`, to send again: the air may
    /// lose them, and nothing else would.
    func repeats(now: Int64, interval: Int64) -> [(LinkID, [UInt8])] {
        state.withLock { s in
            var due: [(LinkID, [UInt8])] = []
            for (link, entry) in s.links {
                guard case .initiating(let handshake, let frame, let sentAt) = entry, now - sentAt >= interval else { continue }
                s.links[link] = .initiating(handshake, frame: frame, sentAt: now)
                due.append((link, frame))
            }
            return due
        }
    }

    func close(_ link: LinkID) {
        _ = state.withLock { $0.links.removeValue(forKey: link) }
    }

    // MARK: Frames

    /// One SDU from the peer on `link`, incoming (`initiatedLocally` false) or ours.
    func receive(_ sdu: [UInt8], on link: LinkID) -> Received {
        state.withLock { s in
            switch s.links[link] {
            case nil:
                return firstFrame(sdu, on: link, &s)
            case .plain:
                guard !SecureFrame.isVersion2(sdu) else { return .refused("a v2 frame on a v1 link") }
                do {
                    return .message(try PeerMessage(frame: sdu))
                } catch {
                    return .refused("undecodable message: \(error)")
                }
            case .initiating(var handshake, _, _):
                do {
                    guard case .handshakeResponse(let message) = try SecureFrame(frame: sdu) else {
                        return .refused("expected the handshake's answer")
                    }
                    let (_, keys) = try handshake.readResponse(message)
                    s.links[link] = .secure(SecureChannel(keys: keys), answered: nil)
                    return .established
                } catch {
                    return .refused("handshake failed: \(error)")
                }
            case .secure(var channel, let answered):
                do {
                    let frame = try SecureFrame(frame: sdu)
                    if case .handshakeInitiation(let message) = frame {
                        // The initiator lost our answer: the same message gets the same answer.
                        if let answered, answered.message == message { return .reply(answered.reply) }
                        return .discarded("a second handshake on an established link")
                    }
                    let message = try channel.open(frame)
                    s.links[link] = .secure(channel, answered: answered)
                    return .message(message)
                } catch {
                    return .discarded("\(error)")
                }
            }
        }
    }

    /// The first SDU on a link a peer opened to us: a v2 handshake, or a v1 `hello`.
    private func firstFrame(_ sdu: [UInt8], on link: LinkID, _ s: inout State) -> Received {
        if SecureFrame.isVersion2(sdu) {
            guard let psk else { return .refused("the peer speaks v2 (encrypted) and this rig has no event key") }
            do {
                guard case .handshakeInitiation(let message) = try SecureFrame(frame: sdu) else {
                    return .refused("the first v2 frame was not the handshake's first message")
                }
                guard !s.answeredInitiations.contains(message) else {
                    return .refused("a replayed handshake: its first message was answered before, on another link")
                }
                var handshake = NoiseHandshake(role: .responder, psk: psk, ephemeral: newEphemeralKey())
                _ = try handshake.readInitiation(message)
                let (response, keys) = try handshake.writeResponse()
                let reply = SecureFrame.handshakeResponse(response).encoded()
                s.answeredInitiations.insert(message)
                s.links[link] = .secure(SecureChannel(keys: keys), answered: (message, reply))
                return .reply(reply)
            } catch {
                return .refused("handshake failed: \(error)")
            }
        }
        guard psk == nil || settings.allowInsecurePeers else {
            return .refused("the peer speaks v1 (unencrypted) and this rig requires the event key; set \"allowInsecurePeers\": true to range with it")
        }
        s.links[link] = .plain
        do {
            return .message(try PeerMessage(frame: sdu))
        } catch {
            return .refused("undecodable message: \(error)")
        }
    }

    /// The bytes that carry `message` on `link`: v1 in the clear or v2 sealed; nil once the link
    /// is gone or not ready.
    func frame(_ message: PeerMessage, on link: LinkID) -> [UInt8]? {
        state.withLock { s in
            switch s.links[link] {
            case .plain: return message.encoded()
            case .secure(var channel, let answered):
                let frame = channel.seal(message)
                s.links[link] = .secure(channel, answered: answered)
                return frame
            case .initiating, nil: return nil
            }
        }
    }

    /// The secret the link's UWB sessions derive their STS from; nil on a v1 link.
    func rangingSecret(_ link: LinkID) -> [UInt8]? {
        state.withLock { s in
            if case .secure(let channel, _) = s.links[link] { channel.rangingSecret } else { nil }
        }
    }
}
