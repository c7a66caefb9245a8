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

    struct Device {
        var uwbs: VirtualUWBS
        var output: DeviceOutput
        var outbox: [UInt8] = []
    }

    struct Endpoint {
        var handler: AirHandler
        var advertisingData: [UInt8]?
        var scanning = false
        var outbox: [BLEEvent] = []
    }

    struct Link {
        var initiator: Int
        var target: Int
    }

    /// A keyed body's LE privacy: its identity resolving key and the address of the current
    /// rotation period.
    struct Privacy {
        var irk: [UInt8]
        var seed: UInt64
        var period: Int64 = -1
        var address = BLEAddress(bytes: [0, 0, 0, 0, 0, 0])
    }

    struct Delivery {
        var at: Int64
        var body: Int
        var event: BLEEvent
    }

    struct State {
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

    struct SentOn: Hashable {
        var link: LinkID
        var body: Int
    }

    /// A controller session's round: its body, session handle and nominal start (ms).
    struct AirRound: Hashable {
        var body: Int
        var handle: UInt32
        var nominal: Int64
    }

    struct Pair: Hashable {
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
    let air: SharedUWBAir
    let bleAir = SharedBLEAir()
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
            if radio.sharedAir, let refusal = connectionRefusal(from: body, to: target, s) {
                s.deliveries.append(Delivery(at: s.now + refusal, body: body, event: .linkClosed(id)))
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

    /// On the shared air, when a connection fails for want of a controller's resources (ms until
    /// the initiator hears so), or nil: an initiator whose controller holds its limit refuses
    /// at once (Limited Resources, 0x0D); a target that holds its limit does not answer, and the
    /// initiator's link layer gives up (`SharedBLEAir.establishTimeoutMilliseconds`).
    private func connectionRefusal(from body: Int, to target: Int, _ s: borrowing State) -> Int64? {
        func full(_ end: Int) -> Bool {
            let held = s.links.values.reduce(0) { $0 + ($1.initiator == end || $1.target == end ? 1 : 0) }
            return held >= scenario.nodes[end].bleConnections ?? bleAir.connectionLimit
        }
        if full(body) { return Self.airLatencyMilliseconds }
        return full(target) ? bleAir.establishTimeoutMilliseconds : nil
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
    func findPartner(_ s: State, body: Int, session: VirtualUWBS.Session, address: UInt16? = nil) -> (Int, UInt32)? {
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

    /// Each listening scanner hears each advertiser in range, unless the radio model loses the
    /// advert or, on the shared air, the other adverts it hears collide with all of the
    /// advertiser's events this period (drawn apart from the world's random stream, so a run's
    /// other draws stay as they were).
    private func reportAdverts(_ s: inout State) {
        let bodies = s.endpoints.keys.sorted()
        for scanner in bodies where listens(scanner, s) {
            let onAir = bodies.filter { reaches($0, scanner, s) && s.endpoints[$0]!.advertisingData != nil }
            let distances = onAir.map { distance(between: scanner, and: $0, at: s.now) }
            let levels = zip(onAir, distances).filter { $0.1 <= radio.bleRange }.map { radio.advertLevel(distance: $0.1) }.sorted()
            for (advertiser, d) in zip(onAir, distances) {
                let data = s.endpoints[advertiser]!.advertisingData!
                guard let rssi = radio.advertRSSI(distance: d, random: &s.random) else { continue }
                if radio.sharedAir {
                    let interferers = bleAir.interferers(of: radio.advertLevel(distance: d), amongAscending: levels)
                    var draw = SplitMix64(seed: UInt64(s.now) << 24 ^ UInt64(scanner) << 12 ^ UInt64(advertiser) ^ 0xB1E_A1)
                    let period = Double(Self.advertPeriodMilliseconds)
                    guard bleAir.heard(interferers: interferers, periodMilliseconds: period, draw: draw.unit()) else { continue }
                }
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
