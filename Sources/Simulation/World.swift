import BLE
import Bridge
import Glibc
import PeerSecurity
import Proximity
import Synchronization
import UCI

/// The shared virtual space: bodies moving along scenario paths, each optionally carrying a
/// virtual UWBS and a virtual BLE endpoint. It answers UCI commands at once and, when time
/// advances, produces ranging rounds, advert reports and link traffic into per-body outboxes
/// that the driver delivers body by body (which keeps seeded runs reproducible).
///
/// One lock guards everything; every operation is short and never calls out while holding it.
package final class World: Sendable {
    typealias DeviceOutput = @Sendable ([UInt8]) -> Void
    typealias AirHandler = @Sendable (BLEEvent) -> Void

    private struct Device {
        var uwbs: VirtualUWBS
        var output: DeviceOutput
        var outbox: [UInt8] = []
    }

    private struct Endpoint {
        var handler: AirHandler
        var advertisingData: [UInt8]?
        var scanning = false
        var outbox: [BLEEvent] = []
    }

    private struct Link {
        var initiator: Int
        var target: Int
    }

    /// A keyed body's LE privacy: its identity resolving key and the address of the current
    /// rotation period.
    private struct Privacy {
        var irk: [UInt8]
        var seed: UInt64
        var period: Int64 = -1
        var address = BLEAddress(bytes: [0, 0, 0, 0, 0, 0])
    }

    private struct Delivery {
        var at: Int64
        var body: Int
        var event: BLEEvent
    }

    private struct State {
        var now: Int64 = 0
        var random: SplitMix64
        var devices: [Int: Device] = [:]
        var endpoints: [Int: Endpoint] = [:]
        var links: [LinkID: Link] = [:]
        var nextLink: LinkID = 1
        /// Bodies that advertise and connect from resolvable private addresses.
        var privacy: [Int: Privacy] = [:]
        var deliveries: [Delivery] = []
        /// Bodies whose scanners hear no adverts (a fault: a wedged discovery).
        var deafBodies: Set<Int> = []
        /// Bodies whose adapters are powered off: no adverts either way, no links.
        var poweredOff: Set<Int> = []
        /// Connection attempts still to stall, by initiating body, and the stalled ones' initiators.
        var connectionsToStall: [Int: Int] = [:]
        var stalledConnections: [LinkID: Int] = [:]
        /// The slowly varying radio errors of each pair of bodies (lower index first).
        var channels: [Pair: RadioModel.PairChannel] = [:]
        /// The last SDUs each body sent on each link, for the attacker's replays.
        var recentSDUs: [SentOn: [[UInt8]]] = [:]
        /// With shared air: the frames of every round that can overlap the rounds due now, by
        /// start, each round's number and its frames (`buildAir`, once per step with rounds due).
        var air: [UWBAirFrame] = []
        var airRounds: [AirRound: Int] = [:]
        var airFramesOfRound: [[UWBAirFrame]] = []
        var airLongestFrame = 0.0
        var airStatistics = SharedAirStatistics()

        mutating func forget(_ id: LinkID, _ link: Link) {
            links[id] = nil
            recentSDUs[SentOn(link: id, body: link.initiator)] = nil
            recentSDUs[SentOn(link: id, body: link.target)] = nil
        }
    }

    private struct SentOn: Hashable {
        var link: LinkID
        var body: Int
    }

    /// A controller session's round: its body, session handle and nominal start (ms).
    private struct AirRound: Hashable {
        var body: Int
        var handle: UInt32
        var nominal: Int64
    }

    private struct Pair: Hashable {
        var low: Int
        var high: Int
        init(_ a: Int, _ b: Int) { (low, high) = (min(a, b), max(a, b)) }
    }

    package let scenario: Scenario
    package let radio: RadioModel
    /// Each body's board antenna-delay offset, metres (see `Scenario.Node.boardOffset`).
    package let boardOffsets: [Double]
    /// Each body's board clock error, parts per million (within ±`RadioModel.clockTolerance`).
    let clockErrors: [Double]
    private let air: SharedUWBAir
    private let state: Mutex<State>
    /// Adverts reach scanners this often.
    static let advertPeriodMilliseconds: Int64 = 250
    /// Link traffic arrives with the next time step.
    static let airLatencyMilliseconds: Int64 = 1
    /// How long a resolvable private address is used (`Scenario.rpaTimeout`).
    let rpaTimeoutMilliseconds: Int64

    package init(scenario: Scenario, seed: UInt64) {
        self.scenario = scenario
        let radio = scenario.radio ?? RadioModel()
        self.radio = radio
        var offsets = SplitMix64(seed: seed ^ 0x0FF5_E7)
        self.boardOffsets = scenario.nodes.map { $0.boardOffset ?? radio.boardOffset(random: &offsets) }
        var clocks = SplitMix64(seed: seed ^ 0xC10C)
        self.clockErrors = scenario.nodes.map { _ in radio.clockTolerance * (2 * clocks.unit() - 1) }
        self.air = SharedUWBAir(captureMargin: radio.captureMargin, codeIsolation: radio.codeIsolation, range: radio.uwbRange)
        self.rpaTimeoutMilliseconds = Int64(((scenario.rpaTimeout ?? 900) * 1000).rounded())
        self.state = Mutex(State(random: SplitMix64(seed: seed ^ 0x5EED_0F_A1D)))
    }

    package var nowMilliseconds: Int64 { state.withLock { $0.now } }

    package func bodyIndex(named name: String) -> Int? {
        scenario.nodes.firstIndex { $0.name == name }
    }

    /// BLE address of a body: a static random address (two top bits set) derived from its index.
    /// A body with LE privacy uses it only as its identity; on the air it has `airAddress`.
    package static func address(ofBody body: Int) -> BLEAddress {
        BLEAddress(bytes: [UInt8(truncatingIfNeeded: body), UInt8(truncatingIfNeeded: body >> 8), 0x42, 0x57, 0x42, 0xC0])
    }

    /// Gives `body` LE privacy, as a kernel with privacy on: from now on it advertises and
    /// connects from a resolvable private address made with `irk` (most significant octet
    /// first), a new one every `rpaTimeoutMilliseconds` from time 0 (the n-th: prand from the
    /// first output of SplitMix64 seeded with `seed` XOR 0x49524B XOR n). Links keep the
    /// addresses they were made with.
    func givePrivacy(body: Int, irk: [UInt8], seed: UInt64) {
        state.withLock { $0.privacy[body] = Privacy(irk: irk, seed: seed ^ 0x49_52_4B) }
    }

    func hasPrivacy(body: Int) -> Bool {
        state.withLock { $0.privacy[body] != nil }
    }

    /// The address `body` advertises and connects from now.
    private func airAddress(_ body: Int, _ s: inout State) -> BLEAddress {
        guard var privacy = s.privacy[body] else { return Self.address(ofBody: body) }
        let period = s.now / rpaTimeoutMilliseconds
        if period != privacy.period {
            var random = SplitMix64(seed: privacy.seed ^ UInt64(period))
            privacy.period = period
            privacy.address = ResolvablePrivateAddress.address(irk: privacy.irk, prand: ResolvablePrivateAddress.prand(random: random.next()))
            s.privacy[body] = privacy
        }
        return privacy.address
    }

    /// The body an address is, or was, on the air: a static address, or a resolvable private
    /// address its IRK resolves (as a host that holds every IRK would).
    func body(at address: BLEAddress) -> Int? {
        state.withLock { s in
            let keyed = s.privacy.keys.sorted()
            if let body = keyed.first(where: { s.privacy[$0]!.address == address })
                ?? keyed.first(where: { ResolvablePrivateAddress.resolves(address, irk: s.privacy[$0]!.irk) })
            {
                return body
            }
            return scenario.nodes.indices.first { Self.address(ofBody: $0) == address && s.privacy[$0] == nil }
        }
    }

    func distance(between a: Int, and b: Int, at milliseconds: Int64) -> Double {
        let t = Double(milliseconds) / 1000
        let p = scenario.nodes[a].position(at: t)
        let q = scenario.nodes[b].position(at: t)
        return ((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)).squareRoot()
    }

    // MARK: UWB devices

    /// Plugs a virtual UWBS into `body` (replacing any previous one: a replug), speaking `uci`
    /// if given, else what the scenario says.
    func attachDevice(body: Int, uci: BoardUCI? = nil, output: @escaping DeviceOutput) {
        let node = scenario.nodes[body]
        let uwbs = VirtualUWBS(
            serial: UInt8(truncatingIfNeeded: body), maxSessions: node.uwbSessions ?? VirtualUWBS.defaultMaxSessions,
            uci: uci ?? node.uci ?? .v2_0, honoursRSSIReporting: node.rssi ?? true)
        state.withLock { $0.devices[body] = Device(uwbs: uwbs, output: output) }
    }

    func detachDevice(body: Int) {
        _ = state.withLock { $0.devices.removeValue(forKey: body) }
    }

    /// Host bytes for the device in `body`; the replies go out before this returns.
    func deviceInput(body: Int, bytes: [UInt8]) {
        let reply: (DeviceOutput, [UInt8])? = state.withLock { s in
            guard var device = s.devices[body] else { return nil }
            let out = device.uwbs.receive(bytes, now: s.now)
            s.devices[body] = device
            return (device.output, out)
        }
        if let (output, bytes) = reply, !bytes.isEmpty { output(bytes) }
    }

    // MARK: BLE endpoints

    func attachEndpoint(body: Int, handler: @escaping AirHandler) {
        state.withLock { $0.endpoints[body] = Endpoint(handler: handler) }
    }

    func detachEndpoint(body: Int) {
        state.withLock { s in
            s.endpoints[body] = nil
            Self.closeLinks(of: body, tellingItself: false, &s)
        }
    }

    /// Ends every link of `body`; the other ends (and `body` itself, if it is still there to
    /// hear it) are told after the air latency.
    private static func closeLinks(of body: Int, tellingItself: Bool, _ s: inout State) {
        for id in s.links.keys.sorted() {
            guard let link = s.links[id], link.initiator == body || link.target == body else { continue }
            s.forget(id, link)
            let other = link.initiator == body ? link.target : link.initiator
            s.deliveries.append(Delivery(at: s.now + airLatencyMilliseconds, body: other, event: .linkClosed(id)))
            if tellingItself { s.deliveries.append(Delivery(at: s.now + airLatencyMilliseconds, body: body, event: .linkClosed(id))) }
        }
    }

    func advertise(body: Int, data: [UInt8]) {
        state.withLock { $0.endpoints[body]?.advertisingData = data }
    }

    /// One advert from `body`, heard after the air latency by the scanners in range that are not
    /// attackers (an `Attacker` sending at its own rate, not the adapter's period).
    func broadcastAdvert(from body: Int, data: [UInt8]) {
        state.withLock { s in
            let address = airAddress(body, &s)
            for scanner in s.endpoints.keys.sorted() where scenario.nodes[scanner].attack == nil && listens(scanner, s) && reaches(body, scanner, s) {
                guard let rssi = radio.advertRSSI(distance: distance(between: scanner, and: body, at: s.now), random: &s.random) else { continue }
                s.deliveries.append(
                    Delivery(at: s.now + Self.airLatencyMilliseconds, body: scanner, event: .advertisement(address, rssi: rssi, data: data)))
            }
        }
    }

    func startScanning(body: Int) {
        state.withLock { $0.endpoints[body]?.scanning = true }
    }

    /// A fault: from now on `body` hears no adverts, as when the kernel's discovery is wedged,
    /// while its links keep working.
    func deafen(body: Int) {
        state.withLock { _ = $0.deafBodies.insert(body) }
    }

    /// A fault: `body`'s adapter is powered off (its links close on both ends, it neither
    /// advertises nor hears adverts) or on again; its adapter reports the change.
    func setAdapterPowered(body: Int, on: Bool) {
        state.withLock { s in
            if on {
                s.poweredOff.remove(body)
            } else {
                s.poweredOff.insert(body)
                Self.closeLinks(of: body, tellingItself: true, &s)
            }
            s.deliveries.append(Delivery(at: s.now + Self.airLatencyMilliseconds, body: body, event: .adapterPowered(on)))
        }
    }

    /// A fault: `body`'s next `count` connection attempts neither open nor fail, as when the
    /// kernel's LE connection never completes (seen in the two-rig VM), until `body` gives up on
    /// them; it then hears them closed.
    func stallConnections(from body: Int, count: Int) {
        state.withLock { $0.connectionsToStall[body, default: 0] += count }
    }

    /// Opens a link from `body` to whoever is on the air with `address` now (an address a body
    /// has rotated away from answers no more); both sides hear of it after the air latency.
    func connect(from body: Int, to address: BLEAddress) -> LinkID {
        state.withLock { s in
            let id = s.nextLink
            s.nextLink &+= 1
            if let stalls = s.connectionsToStall[body], stalls > 0 {
                s.connectionsToStall[body] = stalls - 1
                s.stalledConnections[id] = body
                return id
            }
            let at = s.now + Self.airLatencyMilliseconds
            let target = s.endpoints.keys.sorted().first { airAddress($0, &s) == address }
            if target == nil, s.privacy.values.contains(where: { ResolvablePrivateAddress.resolves(address, irk: $0.irk) }) {
                // An address its body rotated away from: nobody advertises on it, and the
                // controller keeps trying until the host gives up, as a real one does.
                s.stalledConnections[id] = body
                return id
            }
            guard !s.poweredOff.contains(body), let target,
                !s.poweredOff.contains(target), distance(between: body, and: target, at: s.now) <= radio.bleRange
            else {
                s.deliveries.append(Delivery(at: at, body: body, event: .linkClosed(id)))
                return id
            }
            s.links[id] = Link(initiator: body, target: target)
            s.deliveries.append(
                Delivery(at: at, body: body, event: .linkOpened(id, peer: address, initiatedLocally: true)))
            s.deliveries.append(
                Delivery(at: at, body: target, event: .linkOpened(id, peer: airAddress(body, &s), initiatedLocally: false)))
            return id
        }
    }

    func send(_ sdu: [UInt8], on link: LinkID, from body: Int) throws(BLEAdapterError) {
        try state.withLock { (s: inout State) throws(BLEAdapterError) in
            guard let open = s.links[link], open.initiator == body || open.target == body else { throw .unknownLink(link) }
            let other = open.initiator == body ? open.target : open.initiator
            guard !radio.fails(radio.linkLossProbability, random: &s.random) else { return }
            let at = s.now + Self.airLatencyMilliseconds
            var received = sdu
            if !received.isEmpty, radio.fails(radio.linkTamperProbability, random: &s.random) {
                received[Int(s.random.next() % UInt64(received.count))] ^= UInt8(1 + s.random.next() % 255)
            }
            if received.count > 1, radio.fails(radio.linkTruncateProbability, random: &s.random) {
                received = Array(received.prefix(Int(s.random.next() % UInt64(received.count))))
            }
            s.deliveries.append(Delivery(at: at, body: other, event: .linkData(link, received)))
            guard radio.linkReplayProbability > 0 else { return }
            let key = SentOn(link: link, body: body)
            if let earlier = s.recentSDUs[key], !earlier.isEmpty, radio.fails(radio.linkReplayProbability, random: &s.random) {
                let replayed = earlier[Int(s.random.next() % UInt64(earlier.count))]
                s.deliveries.append(Delivery(at: at + 1, body: other, event: .linkData(link, replayed)))
            }
            s.recentSDUs[key, default: []].append(sdu)
            if s.recentSDUs[key]!.count > 8 { s.recentSDUs[key]!.removeFirst() }
        }
    }

    func disconnect(_ link: LinkID, from body: Int) {
        state.withLock { s in
            if let initiator = s.stalledConnections.removeValue(forKey: link) {
                s.deliveries.append(Delivery(at: s.now + Self.airLatencyMilliseconds, body: initiator, event: .linkClosed(link)))
                return
            }
            guard let open = s.links[link] else { return }
            s.forget(link, open)
            let other = open.initiator == body ? open.target : open.initiator
            s.deliveries.append(Delivery(at: s.now + Self.airLatencyMilliseconds, body: other, event: .linkClosed(link)))
        }
    }

    // MARK: Time

    /// Moves time to `milliseconds`: runs due ranging rounds, advert reports and link deliveries,
    /// and breaks links whose ends moved out of range. Results wait in outboxes until `flush`.
    func advance(to milliseconds: Int64) {
        state.withLock { s in
            s.now = milliseconds
            runRangingRounds(&s)
            if milliseconds % Self.advertPeriodMilliseconds == 0 { reportAdverts(&s) }
            breakLinksOutOfRange(&s)
            let due = s.deliveries.filter { $0.at <= milliseconds }
            s.deliveries.removeAll { $0.at <= milliseconds }
            for delivery in due { s.endpoints[delivery.body]?.outbox.append(delivery.event) }
        }
    }

    /// Hands `body`'s pending UWB bytes to its host.
    func flushDevice(body: Int) {
        let pending: (DeviceOutput, [UInt8])? = state.withLock { s in
            guard let device = s.devices[body], !device.outbox.isEmpty else { return nil }
            s.devices[body]?.outbox = []
            return (device.output, device.outbox)
        }
        if let (output, bytes) = pending { output(bytes) }
    }

    /// Hands `body`'s pending BLE events to its adapter.
    func flushAir(body: Int) {
        let pending: (AirHandler, [BLEEvent])? = state.withLock { s in
            guard let endpoint = s.endpoints[body], !endpoint.outbox.isEmpty else { return nil }
            s.endpoints[body]?.outbox = []
            return (endpoint.handler, endpoint.outbox)
        }
        if let (handler, events) = pending { events.forEach(handler) }
    }

    private func runRangingRounds(_ s: inout State) {
        var airBuilt = false
        for body in s.devices.keys.sorted() {
            guard let handles = s.devices[body]?.uwbs.sessions.keys.sorted() else { continue }
            for handle in handles {
                while let session = s.devices[body]?.uwbs.sessions[handle], session.state == .active,
                    session.nextRoundMilliseconds <= s.now
                {
                    if radio.sharedAir, !airBuilt {
                        buildAir(&s)
                        airBuilt = true
                    }
                    let roundTime = session.nextRoundMilliseconds
                    s.devices[body]?.uwbs.scheduleNextRound(handle: handle, at: roundTime + session.intervalMilliseconds)
                    rangingRound(&s, body: body, session: session)
                }
            }
        }
    }

    /// One DS-TWR round. In deferred DS-TWR the controller sends the result to the controlee, so
    /// both report the same reading (unless the radio model makes the controlee miss it); an
    /// unmatched session reports RX_TIMEOUT like a board does. A one-to-many controller ranges
    /// with each controlee on its list in turn and reports them all in one notification; each
    /// controlee reports its own reading.
    private func rangingRound(_ s: inout State, body: Int, session: VirtualUWBS.Session) {
        if session.isController, session.isOneToMany {
            oneToManyRound(&s, body: body, session: session)
            return
        }
        let partner = findPartner(s, body: body, session: session)
        if !session.isController, partner != nil { return }  // the controller's round reports for both
        let peerAddress = session.destinations.first ?? 0
        guard let (otherBody, otherHandle) = partner, let otherAddress = session.ownAddress else {
            emit(&s, body: body, handle: session.handle, measurements: [Self.measurement(of: peerAddress, nil)])
            return
        }
        s.devices[otherBody]?.uwbs.scheduleNextRound(
            handle: otherHandle, at: session.nextRoundMilliseconds + 2 * session.intervalMilliseconds)
        let lost = airLosses(&s, body: body, session: session)
        let reading = rangingReading(&s, body, otherBody)
        emit(
            &s, body: body, handle: session.handle,
            measurements: [Self.measurement(of: peerAddress, lost.measurement.contains(otherBody) || lost.report.contains(body) ? nil : reading)])
        let resultLost = radio.fails(radio.resultLossProbability, random: &s.random)
        let controleeMissed = resultLost || lost.measurement.contains(otherBody) || lost.report.contains(otherBody)
        emit(
            &s, body: otherBody, handle: otherHandle,
            measurements: [Self.measurement(of: otherAddress, controleeMissed ? nil : reading, otherSide: true)])
    }

    private func oneToManyRound(_ s: inout State, body: Int, session: VirtualUWBS.Session) {
        guard let ownAddress = session.ownAddress else { return }
        var measurements: [TwoWayMeasurement] = []
        let lost = airLosses(&s, body: body, session: session)
        for controlee in session.destinations {
            guard let (otherBody, otherHandle) = findPartner(s, body: body, session: session, address: controlee) else {
                measurements.append(Self.measurement(of: controlee, nil))
                continue
            }
            s.devices[otherBody]?.uwbs.scheduleNextRound(
                handle: otherHandle, at: session.nextRoundMilliseconds + 2 * session.intervalMilliseconds)
            let reading = rangingReading(&s, body, otherBody)
            measurements.append(Self.measurement(of: controlee, lost.measurement.contains(otherBody) ? nil : reading))
            let resultLost = radio.fails(radio.resultLossProbability, random: &s.random)
            let controleeMissed = resultLost || lost.measurement.contains(otherBody) || lost.report.contains(otherBody)
            emit(
                &s, body: otherBody, handle: otherHandle,
                measurements: [Self.measurement(of: ownAddress, controleeMissed ? nil : reading, otherSide: true)])
        }
        emit(&s, body: body, handle: session.handle, measurements: measurements)
    }

    // MARK: Shared air

    /// Lays out on the air every active controller session's rounds around those due now. The
    /// world runs rounds on its step grid, where sessions started by nodes acting at the same step
    /// would stay in lock step for ever; on the air each session's rounds keep their own phase
    /// within the interval, as sessions that boards started at unrelated moments do, and move on
    /// each board's own clock (`clockErrors`). A board runs one round at a time and knows when
    /// the rounds it joins as a controlee come: its own rounds start after its previous one ends
    /// and outside those (as planned before anyone moved: an approximation).
    private func buildAir(_ s: inout State) {
        s.air = []
        s.airRounds = [:]
        s.airFramesOfRound = []
        var planned: [PlannedRound] = []
        for body in s.devices.keys.sorted() {
            for session in s.devices[body]!.uwbs.sessions.values.sorted(by: { $0.handle < $1.handle })
            where session.state == .active && session.isController {
                let controlees = session.isOneToMany
                    ? session.destinations.compactMap { findPartner(s, body: body, session: session, address: $0)?.0 }
                    : findPartner(s, body: body, session: session).map { [$0.0] } ?? []
                let interval = max(session.intervalMilliseconds, 1)
                var draw = SplitMix64(seed: UInt64(session.id) ^ UInt64(session.handle) << 32 ^ UInt64(body) << 48)
                let phase = Double(draw.next() % UInt64(interval * 1000))
                let length = frames(of: session, body: body, controlees: controlees, round: 0, start: 0).map(\.end).max() ?? 0
                for k in Int64(-2)...1 {
                    let nominal = session.nextRoundMilliseconds + k * interval
                    let start = Double(nominal) * 1000 * (1 + clockErrors[body] * 1e-6) + phase
                        + Self.hopOffset(session, block: nominal / interval)
                    planned.append(
                        PlannedRound(
                            key: AirRound(body: body, handle: session.handle, nominal: nominal), session: session, controlees: controlees,
                            start: start, length: length))
                }
            }
        }
        var joined: [Int: [(start: Double, end: Double)]] = [:]
        for round in planned {
            for controlee in round.controlees { joined[controlee, default: []].append((round.start, round.start + round.length)) }
        }
        let byBody = Dictionary(grouping: planned, by: \.key.body)
        for body in byBody.keys.sorted() {
            let busy = joined[body] ?? []
            var free = -Double.infinity
            for round in byBody[body]!.sorted(by: { ($0.start, $0.key.handle) < ($1.start, $1.key.handle) }) {
                var start = max(round.start, free)
                for _ in 0..<8 {
                    guard let clash = busy.first(where: { start < $0.end && $0.start < start + round.length }) else { break }
                    start = clash.end + Self.roundGapMicroseconds
                }
                let id = s.airFramesOfRound.count
                s.airRounds[round.key] = id
                let frames = frames(of: round.session, body: body, controlees: round.controlees, round: id, start: start)
                free = (frames.map(\.end).max() ?? start) + Self.roundGapMicroseconds
                s.air += frames
                s.airFramesOfRound.append(frames)
            }
        }
        s.air.sort { $0.start < $1.start }
        s.airLongestFrame = s.air.map { $0.end - $0.start }.max() ?? 0
    }

    /// The frames on the air that can overlap `frame`: those starting within the longest frame
    /// before it, up to its end (a binary search in the frames by start).
    private func airAround(_ frame: UWBAirFrame, _ s: borrowing State) -> ArraySlice<UWBAirFrame> {
        func firstIndex(startingAtOrAfter time: Double) -> Int {
            var (low, high) = (0, s.air.count)
            while low < high {
                let middle = (low + high) / 2
                if s.air[middle].start < time { low = middle + 1 } else { high = middle }
            }
            return low
        }
        return s.air[firstIndex(startingAtOrAfter: frame.start - s.airLongestFrame)..<firstIndex(startingAtOrAfter: frame.end)]
    }

    /// Between two rounds of one board.
    static let roundGapMicroseconds = 100.0

    /// Where a hopping session's round sits in ranging block `block` (µs after the block's
    /// start): FiRa round hopping divides the block (RANGING_DURATION) into rounds of
    /// SLOTS_PER_RR slots and runs each block's ranging in one of them, chosen anew per block by
    /// a sequence both boards follow. The world draws it from the session id and block index,
    /// not FiRa's own sequence: what matters on the air is that two sessions which meet in one
    /// block are unlikely to meet in the next. Zero for a session that does not hop.
    static func hopOffset(_ session: VirtualUWBS.Session, block: Int64) -> Double {
        guard session.hops else { return 0 }
        let timing = UWBFrameTiming(config: session.config)
        let round = Double(session.config[.slotsPerRangingRound]?.first ?? 6) * timing.slotMicroseconds
        let rounds = UInt64(max(1, Double(max(session.intervalMilliseconds, 1)) * 1000 / round))
        var draw = SplitMix64(seed: UInt64(session.id) << 32 ^ UInt64(bitPattern: block))
        return Double(draw.next() % rounds) * round
    }

    private struct PlannedRound {
        var key: AirRound
        var session: VirtualUWBS.Session
        var controlees: [Int]
        var start: Double
        var length: Double
    }

    private func frames(of session: VirtualUWBS.Session, body: Int, controlees: [Int], round: Int, start: Double) -> [UWBAirFrame] {
        SharedUWBAir.roundFrames(
            round: round, start: start, timing: UWBFrameTiming(config: session.config), channel: session.config[.channelNumber]?.first ?? 9,
            preambleCode: session.config[.preambleCodeIndex]?.first ?? 10, controller: body,
            controllerInitiates: session.config[.deviceRole] != [0], controlees: controlees)
    }

    /// The bodies of a round now due whose measurement is lost on the shared air, and those
    /// that miss only the report; counted in the statistics.
    private func airLosses(_ s: inout State, body: Int, session: VirtualUWBS.Session) -> (measurement: Set<Int>, report: Set<Int>) {
        guard radio.sharedAir, let id = s.airRounds[AirRound(body: body, handle: session.handle, nominal: session.nextRoundMilliseconds)]
        else { return ([], []) }
        let now = s.now
        let budget = LinkBudget(levelAtOneMetreDBm: radio.levelAtOneMetre)
        var measurement: Set<Int> = []
        var report: Set<Int> = []
        var counted: Set<Int> = []
        let link = { (from: Int, to: Int) -> (metres: Double, level: Double) in
            let metres = self.distance(between: from, and: to, at: now)
            return (metres, budget.level(atMetres: metres))
        }
        for frame in s.airFramesOfRound[id] {
            if counted.insert(frame.slot).inserted {
                s.airStatistics.busyMicroseconds[frame.channel, default: 0] += frame.end - frame.start
            }
            guard air.lost(frame, among: airAround(frame, s), link: link) else { continue }
            let controlee = frame.transmitter == body ? frame.receiver! : frame.transmitter
            if frame.kind == .report { report.insert(frame.receiver!) } else { measurement.insert(controlee) }
        }
        s.airStatistics.rounds += 1
        if !measurement.isEmpty { s.airStatistics.lostRounds += 1 }
        return (measurement, report)
    }

    /// What the shared air did so far: rounds run, rounds whose measurement it lost, and how
    /// long each channel carried frames (µs).
    package var sharedAirStatistics: SharedAirStatistics { state.withLock { $0.airStatistics } }

    /// One round between two bodies: the pair's slowly varying errors move on, both boards'
    /// offsets apply.
    private func rangingReading(_ s: inout State, _ body: Int, _ otherBody: Int) -> RadioModel.Reading? {
        let pair = Pair(body, otherBody)
        var channel = s.channels[pair] ?? RadioModel.PairChannel()
        defer { s.channels[pair] = channel }
        return radio.rangingReading(
            trueDistance: distance(between: body, and: otherBody, at: s.now), time: Double(s.now) / 1000,
            boardOffsets: boardOffsets[body] + boardOffsets[otherBody], channel: &channel, random: &s.random)
    }

    /// The TWR record a board reports: whole centimetres, RSSI as UCI 2.0's Q7.1 magnitude of
    /// negative dBm (−35 dBm is 70).
    private static func measurement(of peer: UInt16, _ reading: RadioModel.Reading?, otherSide: Bool = false) -> TwoWayMeasurement {
        guard let reading else {
            return TwoWayMeasurement(address: .short(peer), status: .rangingRxTimeout, lineOfSight: .unknown(0xFF), distanceCentimetres: 0)
        }
        let metres = otherSide ? reading.otherSide : reading.metres
        let rssi = otherSide ? reading.otherRSSI : reading.rssi
        return TwoWayMeasurement(
            address: .short(peer), status: metres < 0 ? .okNegativeDistanceReport : .ok,
            lineOfSight: reading.nonLineOfSight ? .nonLineOfSight : .lineOfSight,
            distanceCentimetres: UInt16(min(abs(metres * 100).rounded(), Double(UInt16.max))),
            rssi: UInt8(clamping: Int((-rssi * 2).rounded())))
    }

    private func emit(_ s: inout State, body: Int, handle: UInt32, measurements: [TwoWayMeasurement]) {
        guard let bytes = s.devices[body]?.uwbs.rangeNotification(handle: handle, measurements: measurements) else { return }
        s.devices[body]?.outbox += bytes
    }

    /// The active session on another device that this one can range with: same session id and
    /// air parameters, opposite device type, and each naming the other's address.
    /// With `address`, only a partner with that address (one controlee of a one-to-many controller).
    private func findPartner(_ s: State, body: Int, session: VirtualUWBS.Session, address: UInt16? = nil) -> (Int, UInt32)? {
        guard let own = session.ownAddress else { return nil }
        for other in s.devices.keys.sorted() where other != body {
            for candidate in s.devices[other]!.uwbs.sessions.values.sorted(by: { $0.handle < $1.handle })
            where candidate.state == .active && candidate.id == session.id
                && candidate.isController != session.isController
                && candidate.airParameters == session.airParameters
                && candidate.ownAddress.map(session.destinations.contains) == true
                && (address == nil || candidate.ownAddress == address)
                && candidate.destinations.contains(own)
            {
                return (other, candidate.handle)
            }
        }
        return nil
    }

    /// Whether `scanner` hears adverts now: it scans, is not deaf and is powered.
    private func listens(_ scanner: Int, _ s: borrowing State) -> Bool {
        s.endpoints[scanner]?.scanning == true && !s.deafBodies.contains(scanner) && !s.poweredOff.contains(scanner)
    }

    /// Whether `advertiser`'s adverts reach a listening `scanner`, range aside: another body,
    /// powered, and not two members of a crowd (crowds do not hear each other).
    private func reaches(_ advertiser: Int, _ scanner: Int, _ s: borrowing State) -> Bool {
        advertiser != scanner && !s.poweredOff.contains(advertiser)
            && !(scenario.nodes[scanner].crowd == true && scenario.nodes[advertiser].crowd == true)
    }

    private func reportAdverts(_ s: inout State) {
        let bodies = s.endpoints.keys.sorted()
        for scanner in bodies where listens(scanner, s) {
            for advertiser in bodies where reaches(advertiser, scanner, s) {
                guard let data = s.endpoints[advertiser]!.advertisingData else { continue }
                let d = distance(between: scanner, and: advertiser, at: s.now)
                guard let rssi = radio.advertRSSI(distance: d, random: &s.random) else { continue }
                let address = airAddress(advertiser, &s)
                s.endpoints[scanner]!.outbox.append(.advertisement(address, rssi: rssi, data: data))
            }
        }
    }

    private func breakLinksOutOfRange(_ s: inout State) {
        for id in s.links.keys.sorted() {
            let link = s.links[id]!
            guard distance(between: link.initiator, and: link.target, at: s.now) > radio.bleRange else { continue }
            s.forget(id, link)
            s.endpoints[link.initiator]?.outbox.append(.linkClosed(id))
            s.endpoints[link.target]?.outbox.append(.linkClosed(id))
        }
    }
}
