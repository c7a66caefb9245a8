import BLE
import Bridge
import Crypto
import PeerSecurity
import Synchronization

/// An attacker node (`Attack`), driven by the simulation step by step like the world's radios, so
/// that a world with attackers runs the same way twice for a seed. It has no key and completes
/// nothing: it only learns addresses from the adverts of the real (non-attacker) nodes it hears,
/// then replays, connects and sends at `rate` per second.
final class Attacker: Sendable {
    private struct State {
        var random: SplitMix64
        /// Events the world handed over since the last step.
        var inbox: [BLEEvent] = []
        /// Real nodes' addresses in the order first heard, and the last advert of each.
        var heard: [BLEAddress] = []
        var adverts: [BLEAddress: [UInt8]] = [:]
        var lastAdvertFrom: BLEAddress?
        /// Links this attacker asked for, opened or not yet, by the address they go to.
        var links: [LinkID: BLEAddress] = [:]
        var next = 0
        var credit = 0.0
        var lastStep: Int64?
        var actions = 0
        /// Links the real nodes opened to this attacker.
        var linksOffered = 0
    }

    private let world: World
    private let body: Int
    private let attack: Attack
    /// What `handshakeReplay` sends: a valid message 1 made with the event key.
    private let replayedInitiation: [UInt8]?
    /// The scenario's real nodes (the target alone if the attack names one); their adverts are
    /// told by address (`World.body(at:)`, which resolves private addresses).
    private let victims: Set<Int>
    private let state: Mutex<State>

    init(world: World, body: Int, attack: Attack, eventKey: GroupKey?, seed: UInt64) {
        self.world = world
        self.body = body
        self.attack = attack
        var random = SplitMix64(seed: seed ^ 0xA77A_C4E2)
        let nodes = world.scenario.nodes.indices.filter { world.scenario.nodes[$0].attack == nil }
        self.victims = Set(nodes.filter { attack.target == nil || world.scenario.nodes[$0].name == attack.target })
        self.replayedInitiation = eventKey.map { Self.initiation(key: $0, random: &random) }
        self.state = Mutex(State(random: random))
        world.attachEndpoint(body: body) { [weak self] event in self?.state.withLock { $0.inbox.append(event) } }
        world.startScanning(body: body)
    }

    /// Adverts sent and links asked for so far.
    var actions: Int { state.withLock { $0.actions } }
    /// Links real nodes opened to this attacker so far (a replayed advert drew a connection).
    var linksOffered: Int { state.withLock { $0.linksOffered } }

    /// Message 1 of the v2 handshake under `key`, framed as on the air, with an ephemeral key drawn
    /// from `random` (so the bytes depend only on the seed).
    static func initiation(key: GroupKey, random: inout SplitMix64) -> [UInt8] {
        let raw = (0..<4).flatMap { _ in withUnsafeBytes(of: random.next().littleEndian, Array.init) }
        var handshake = NoiseHandshake(
            role: .initiator, psk: KeySchedule.handshakePSK(key), ephemeral: try! .init(rawRepresentation: raw))
        return SecureFrame.handshakeInitiation(handshake.writeInitiation()).encoded()
    }

    /// One step at world time `now`: read what the air brought, then act as often as the rate allows.
    func act(now: Int64) {
        var sends: [(LinkID, [UInt8])] = []
        var connects: [BLEAddress] = []
        var advert: [UInt8]?
        state.withLock { s in
            for event in s.inbox { sends += receive(event, &s) }
            s.inbox = []
            s.credit += attack.rate * Double(now - (s.lastStep ?? now)) / 1000
            s.lastStep = now
            while s.credit >= 1 {
                s.credit -= 1
                switch attack.kind {
                case .advertReplay:
                    advert = s.lastAdvertFrom.flatMap { s.adverts[$0] }
                case .keylessFollower:
                    // One link at a time per address: reconnect only once the last one closed.
                    let busy = Set(s.links.values).union(connects)
                    guard let free = s.heard.indices.map({ (s.next + $0) % s.heard.count }).first(where: { !busy.contains(s.heard[$0]) })
                    else { break }
                    connects.append(s.heard[free])
                    s.next = free + 1
                default:
                    guard !s.heard.isEmpty else { break }
                    connects.append(s.heard[s.next % s.heard.count])
                    s.next += 1
                }
            }
            s.actions += connects.count + (advert == nil ? 0 : 1)
        }
        if let advert { world.broadcastAdvert(from: body, data: advert) }
        for address in connects {
            let link = world.connect(from: body, to: address)
            state.withLock { $0.links[link] = address }
        }
        for (link, bytes) in sends { try? world.send(bytes, on: link, from: body) }
    }

    /// What to send in answer to `event` (on a link this attacker opened).
    private func receive(_ event: BLEEvent, _ s: inout State) -> [(LinkID, [UInt8])] {
        switch event {
        case .advertisement(let address, _, let data) where world.body(at: address).map(victims.contains) == true:
            if s.adverts.updateValue(data, forKey: address) == nil { s.heard.append(address) }
            s.lastAdvertFrom = address
        case .linkOpened(_, _, false):
            s.linksOffered += 1
        case .linkOpened(let link, _, true):
            switch attack.kind {
            case .keylessFollower:
                var other = SplitMix64(seed: s.random.next())
                let wrongKey = try! GroupKey(bytes: (0..<4).flatMap { _ in withUnsafeBytes(of: other.next().littleEndian, Array.init) })
                return [(link, Self.initiation(key: wrongKey, random: &other))]
            case .handshakeReplay:
                return replayedInitiation.map { [(link, $0)] } ?? []
            case .garbage:
                return [(link, garbage(&s.random))]
            case .advertReplay, .connectionFlood:
                break
            }
        case .linkClosed(let link):
            s.links[link] = nil
        default:
            break
        }
        return []
    }

    /// Random bytes (1 to 64), or a handshake or sealed frame cut short, every other one.
    private func garbage(_ random: inout SplitMix64) -> [UInt8] {
        let noise = (0..<(1 + random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        guard random.next() % 2 == 0 else { return noise }
        let frame = random.next() % 2 == 0
            ? SecureFrame.handshakeInitiation(noise + noise).encoded()
            : SecureFrame.sealed(sequence: random.next() % 4, box: noise + noise).encoded()
        return Array(frame.prefix(1 + Int(random.next() % UInt64(frame.count - 1))))
    }
}
