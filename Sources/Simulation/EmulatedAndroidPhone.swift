import Bridge
import GATTServer
import Synchronization
import UCI

/// An attendee's Android phone whose app ranges through Android 16's Ranging module, or through
/// Jetpack's `androidx.core.uwb` with the rig's parameters layout (scenario node kind `android`,
/// `oob` `v1`/`v2`/`v3` or `jetpack`), driven by the simulation step by step like
/// `EmulatedIPhone`. It is written from the published spec, AOSP's sources and
/// docs/android-jetpack.md, not from the rig's code, so the rig is checked against them; every
/// octet it writes or reads is laid out here by hand.
///
/// - **BLE**: the spec's connection-based flow as initiator over the rig's OOB service, in the
///   spec version `oob` names (1, 2 or 3): subscribe, write Ranging Capability Request {UWB},
///   read the rig's UWB capability, choose a configuration from what the rig offers, write
///   Ranging Configuration (configure and start UWB), wait for the Configuration Response; at
///   `stopAt` write Stop Ranging {UWB}, wait for its response, disconnect. A Stop Ranging from the
///   rig ends its session (answered, then it tries again a second later).
/// - **Jetpack**: subscribe to the `jetpack` characteristic, write the parameters (its role,
///   controller or controlee, drawn; a controller's complex channel is channel 9 and a random
///   preamble, as AOSP's `RangingController` picks; a controlee leaves it to the rig with 0, 0),
///   read the rig's "accepted" answer (its address, role and complex channel), then range; at
///   `stopAt` write stop and wait for "stopped".
/// - **Its choices** (drawn from its seed, within the rig's offer): channel 5 or 9, a preamble
///   index, the config id, the rig's role (initiator or responder, as the rig's roles allow) and
///   mode (controller or controlee), the interval among Android's presets for the config id
///   (AOSP `Utils.java`: 120, 240, 600 ms for id 1) at or above the rig's minimum, the slot (1 or
///   2 ms), a session id and a static STS key.
/// - **UWB**: its chip is a virtual UWBS it configures as the rig's counterpart with the values
///   AOSP's `ConfigurationManager`/`Utils` give config id 1 (DS-TWR deferred, static STS with the
///   key's first 2 octets as VENDOR_ID and the other 6 as STATIC_STS_IV, unicast, 6 slots per
///   round, slot ms × 1200 RSTU). The air ranges it with the rig only if the rig's board was
///   given the same parameters.
package final class EmulatedAndroidPhone: Sendable {
    /// What the phone is doing.
    package enum Stage: Equatable, Sendable {
        /// Not connected; tries again at `retryAt` (ms) if a rig is in range.
        case idle(retryAt: Int64)
        /// Wrote the Capability Request, waits for the response.
        case asking(since: Int64)
        /// Wrote the Configuration (or Jetpack's parameters), waits for the Configuration
        /// Response (or "accepted").
        case configuring(since: Int64)
        case ranging
        /// Wrote Stop Ranging, waits for its response.
        case stopping(since: Int64)
        /// Its app stopped for good (`stopAt`).
        case done
    }

    /// Counts for tests and the demo's summary.
    package struct Tally: Equatable, Sendable {
        /// Configuration Responses (Jetpack: "accepted") received: the rig runs the session.
        package var started = 0
        /// Stop Ranging Responses (Jetpack: "stopped") received after its own stop.
        package var stopped = 0
        /// Connections that broke, timed out or were stopped by the rig before the flow's end.
        package var failures = 0
        /// The configurations it sent, for a test to hold the rig's board to them.
        package var configurations: [Choice] = []
    }

    /// One configuration the phone chose.
    package struct Choice: Equatable, Sendable {
        package var sessionID: UInt32
        package var configID: UInt8
        package var channel: UInt8
        package var preambleIndex: UInt8
        package var intervalMilliseconds: UInt16
        package var slotMilliseconds: UInt8
        /// The rig's side: initiator (else responder), controller (else controlee).
        package var rigInitiates: Bool
        package var rigControls: Bool
    }

    private struct Connection {
        var client: GATTClient
    }

    private struct State {
        var random: SplitMix64
        var stage: Stage = .idle(retryAt: 0)
        var connection: Connection?
        var tally = Tally()
        /// Jetpack: the parameters written, until the rig's answer completes them.
        var pending: (Choice, key: [UInt8])?
    }

    /// The spec's message ids.
    private enum MessageID {
        static let capabilityRequest: UInt8 = 0x0
        static let capabilityResponse: UInt8 = 0x1
        static let configuration: UInt8 = 0x2
        static let configurationResponse: UInt8 = 0x3
        static let stopRanging: UInt8 = 0x6
        static let stopRangingResponse: UInt8 = 0x7
    }

    /// The technology bitmap {UWB}: bit 0, two octets little-endian.
    private static let uwbOnly: [UInt8] = [0x01, 0x00]
    /// Android's intervals per unicast config id (AOSP ranging/uwb_backend `Utils.java`: 1 static
    /// STS, 3 and 6 provisioned STS).
    private static let presets: [UInt8: [UInt16]] = [1: [120, 240, 600], 3: [120, 240, 600], 6: [96, 240, 600]]
    /// CONFIG_PROVISIONED_UNICAST_DS_TWR in the Ranging module's numbering.
    private static let provisionedUnicast: UInt8 = 3

    static let answerTimeoutMilliseconds: Int64 = 5000
    static let retryMilliseconds: Int64 = 1000

    private let air: GATTAir
    private let chip: EmulatedPhoneChip
    private let body: Int
    /// The spec version it speaks (1-3); nil for a Jetpack app.
    private let version: UInt8?
    /// Its own UWB short address, drawn once.
    private let address: UInt16
    private let stopAt: Int64?
    private let state: Mutex<State>

    init(world: World, air: GATTAir, body: Int, seed: UInt64) {
        self.air = air
        self.body = body
        let node = world.scenario.nodes[body]
        self.version = (node.oob ?? .v3).specVersion
        var random = SplitMix64(seed: seed ^ 0xA4D2_0DD1)
        self.address = UInt16.random(in: 1...0xFFFE, using: &random)
        self.stopAt = node.stopAt.map { Int64(($0 * 1000).rounded()) }
        self.state = Mutex(State(random: random))
        self.chip = EmulatedPhoneChip(world: world, body: body)
    }

    package var stage: Stage { state.withLock { $0.stage } }
    package var tally: Tally { state.withLock { $0.tally } }

    /// One step: what the rig sent, then timeouts, the stop, and a new connection.
    func act(now: Int64) {
        for delivery in air.take(phone: body) { receive(delivery, now: now) }
        switch stage {
        case .idle(let retryAt):
            if let stopAt, now >= stopAt { return setStage(.done) }
            if now >= retryAt { connect(now: now) }
        case .asking(let since), .configuring(let since):
            if now - since > Self.answerTimeoutMilliseconds { giveUp(now: now) }
        case .ranging:
            if let stopAt, now >= stopAt { stop(now: now) }
        case .stopping(let since):
            if now - since > Self.answerTimeoutMilliseconds { finish() }
        case .done:
            break
        }
    }

    private func setStage(_ stage: Stage) {
        state.withLock { $0.stage = stage }
    }

    /// Connects to the nearest rig serving the OOB service, subscribes, and asks its capability
    /// (or, with Jetpack, writes its parameters).
    private func connect(now: Int64) {
        let (write, notify) = version == nil
            ? (AndroidOOBGATTService.jetpack, AndroidOOBGATTService.jetpack)
            : (AndroidOOBGATTService.phoneToRig, AndroidOOBGATTService.rigToPhone)
        for (rig, database) in air.servers(near: body) where database.characteristic(write) != nil {
            guard let client = air.connect(phone: body, to: rig) else { continue }
            state.withLock { $0.connection = Connection(client: client) }
            guard air.subscribe(to: notify, on: client) else { return giveUp(now: now) }
            guard let version else { return sendJetpackParameters(on: client, now: now) }
            guard self.write([version, MessageID.capabilityRequest] + Self.uwbOnly, on: client) else { return giveUp(now: now) }
            return setStage(.asking(since: now))
        }
        setStage(.idle(retryAt: now + Self.retryMilliseconds))
    }

    private func write(_ message: [UInt8], on client: GATTClient) -> Bool {
        air.write(message, to: version == nil ? AndroidOOBGATTService.jetpack : AndroidOOBGATTService.phoneToRig, on: client)
    }

    private func receive(_ delivery: GATTAir.PhoneDelivery, now: Int64) {
        switch delivery {
        case .disconnected:
            chip.stop()
            state.withLock { s in
                s.connection = nil
                if s.stage != .done { s.tally.failures += 1 }
                s.stage = s.stage == .done ? .done : .idle(retryAt: now + Self.retryMilliseconds)
            }
        case .notification(_, let value):
            guard let version else { return jetpackAnswer(value, now: now) }
            guard value.count >= 2, value[0] == version else { return }
            switch (value[1], stage) {
            case (MessageID.capabilityResponse, .asking):
                configure(capabilityResponse: value, now: now)
            case (MessageID.configurationResponse, .configuring):
                guard Array(value.dropFirst(2)) == Self.uwbOnly else { return giveUp(now: now) }
                state.withLock { s in
                    s.tally.started += 1
                    s.stage = .ranging
                }
            case (MessageID.stopRangingResponse, .stopping):
                state.withLock { $0.tally.stopped += 1 }
                finish()
            case (MessageID.stopRanging, .ranging), (MessageID.stopRanging, .configuring):
                // The rig ended the session: answered, then the connection is given up.
                if let client = state.withLock({ $0.connection?.client }) {
                    _ = write([version, MessageID.stopRangingResponse] + Self.uwbOnly, on: client)
                }
                giveUp(now: now)
            default:
                break
            }
        }
    }

    /// The rig's UWB capability (the PDL's `UwbCapabilities`, after the block's id and size 20):
    /// address (2), channels (4, bit n = channel n), preamble indexes (4, bit n − 1 = index n),
    /// config ids (4, bit n = id n), minimum interval (2), minimum slot (1), roles (1: bit 0
    /// initiator, bit 1 responder). Version 2 and 3 responses end with transitioning (1) and
    /// device type (2).
    private struct Offer {
        var address: [UInt8]
        var channels: [UInt8]
        var preambles: [UInt8]
        var configIDs: [UInt8]
        var minimumInterval: UInt16
        var minimumSlot: UInt8
        var roles: UInt8
    }

    private func offer(in message: [UInt8]) -> Offer? {
        let trailer = (version ?? 1) >= 2 ? 3 : 0
        guard message.count == 4 + 20 + trailer, message[2] == 0x01, message[3] == 0x00, message[4] == 0x00, message[5] == 20 else {
            return nil
        }
        let block = Array(message[6..<24])
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(block[at + $1]) << (8 * $1) } }
        func bits(_ bitmap: UInt32, offset: Int) -> [UInt8] { (0..<32).filter { bitmap >> $0 & 1 == 1 }.map { UInt8($0 + offset) } }
        return Offer(
            address: [block[0], block[1]], channels: bits(u32(2), offset: 0), preambles: bits(u32(6), offset: 1),
            configIDs: bits(u32(10), offset: 0), minimumInterval: UInt16(block[14]) | UInt16(block[15]) << 8, minimumSlot: block[16],
            roles: block[17])
    }

    /// Chooses a configuration from the rig's offer, starts its chip and writes it.
    private func configure(capabilityResponse message: [UInt8], now: Int64) {
        guard let version, let offer = offer(in: message), let client = state.withLock({ $0.connection?.client }) else { return giveUp(now: now) }
        let choice: (Choice, key: [UInt8])? = state.withLock { s in
            let channels = offer.channels.filter { $0 == 5 || $0 == 9 }
            let preambles = offer.preambles.filter { (9...12).contains($0) }
            let configIDs = offer.configIDs.filter { Self.presets[$0] != nil }
            let roles = [offer.roles & 1 != 0, offer.roles & 2 != 0]
            guard let channel = channels.randomElement(using: &s.random), let preamble = preambles.randomElement(using: &s.random),
                let configID = configIDs.randomElement(using: &s.random),
                let interval = Self.presets[configID]?.filter({ $0 >= offer.minimumInterval }).randomElement(using: &s.random),
                let slot = [UInt8(1), 2].filter({ $0 >= offer.minimumSlot }).randomElement(using: &s.random),
                let rigInitiates = [true, false].filter({ roles[$0 ? 0 : 1] }).randomElement(using: &s.random)
            else { return nil }
            let choice = Choice(
                sessionID: UInt32.random(in: 1...UInt32.max, using: &s.random), configID: configID, channel: channel, preambleIndex: preamble,
                intervalMilliseconds: interval, slotMilliseconds: slot, rigInitiates: rigInitiates, rigControls: Bool.random(using: &s.random))
            // A static STS key, vendor id (2) and STS IV (6), for id 1; a provisioned STS's
            // 128-bit session key for id 3 (AOSP's UwbOobConfig carries either as the key).
            let keyLength = configID == Self.provisionedUnicast ? 16 : 8
            return (choice, (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &s.random) })
        }
        guard let (choice, key) = choice else { return giveUp(now: now) }
        startChip(choice, key: key, rigAddress: offer.address)
        state.withLock { $0.tally.configurations.append(choice) }
        guard write(configuration(choice, key: key, version: version), on: client) else { return giveUp(now: now) }
        setStage(.configuring(since: now))
    }

    /// Ranging Configuration (the PDL's `RangingConfiguration` and `UwbConfiguration`):
    /// configure {UWB}, start {UWB}, the UWB block (id 0, size 19 + k): its address, session id,
    /// config id, channel, preamble, interval, slot, key length k and key, country "US", the
    /// rig's role (1 initiator, 2 responder) and mode (1 controller, 2 controlee); version 3
    /// adds motion support (0: none).
    private func configuration(_ choice: Choice, key: [UInt8], version: UInt8) -> [UInt8] {
        var message: [UInt8] = [version, MessageID.configuration] + Self.uwbOnly + Self.uwbOnly
        message += [0x00, UInt8(19 + key.count), UInt8(address & 0xFF), UInt8(address >> 8)]
        message += [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: choice.sessionID >> $0) }
        message += [choice.configID, choice.channel, choice.preambleIndex]
        message += [UInt8(choice.intervalMilliseconds & 0xFF), UInt8(choice.intervalMilliseconds >> 8), choice.slotMilliseconds]
        message += [UInt8(key.count)] + key + Array("US".utf8)
        message += [choice.rigInitiates ? 1 : 2, choice.rigControls ? 1 : 2]
        if version >= 3 { message.append(0) }
        return message
    }

    /// Configures its chip as the rig's counterpart for config id 1 (static STS) or 3
    /// (provisioned STS: STS_CONFIG 3, SESSION_KEY, key rotation on at rate 0, as AOSP's
    /// `ConfigurationManager` sets it) and starts it.
    private func startChip(_ choice: Choice, key: [UInt8], rigAddress: [UInt8]) {
        let slotRSTU = UInt16(choice.slotMilliseconds) * 1200
        let interval = UInt32(choice.intervalMilliseconds)
        let provisioned = choice.configID == Self.provisionedUnicast
        var config: [(AppConfigID, [UInt8])] = [
            (.deviceType, [choice.rigControls ? 0x00 : 0x01]),
            (.rangingRoundUsage, [0x02]),  // DS-TWR deferred
            (.stsConfig, [provisioned ? 0x03 : 0x00]),  // provisioned or static STS
            (.multiNodeMode, [0x00]),  // unicast
            (.channelNumber, [choice.channel]),
            (.numberOfControlees, [0x01]),
            (.deviceMacAddress, [UInt8(address & 0xFF), UInt8(address >> 8)]),
            (.dstMacAddress, rigAddress),
            (.slotDuration, [UInt8(slotRSTU & 0xFF), UInt8(slotRSTU >> 8)]),
            (.rangingDuration, [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: interval >> $0) }),
            (.rangingRoundControl, [0x03]),
            (.deviceRole, [choice.rigInitiates ? 0x00 : 0x01]),
            (.preambleCodeIndex, [choice.preambleIndex]),
            (.slotsPerRangingRound, [6]),
            (.hoppingMode, [0x01]),  // AOSP's ConfigurationManager: hopping on
        ]
        config += provisioned
            ? [(.sessionKey, key), (.keyRotation, [0x01]), (.keyRotationRate, [0x00])]
            : [(.vendorID, Array(key[0..<2])), (.staticSTSIV, Array(key[2..<8]))]
        chip.start(sessionID: choice.sessionID, config: config)
    }

    /// Its app's stop: Stop Ranging {UWB} (Jetpack: stop), its chip stopped, then it waits for
    /// the response.
    private func stop(now: Int64) {
        guard let client = state.withLock({ $0.connection?.client }) else { return setStage(.done) }
        chip.stop()
        let message = version.map { [$0, MessageID.stopRanging] + Self.uwbOnly } ?? Jetpack.header + [Jetpack.stop]
        guard write(message, on: client) else { return finish() }
        setStage(.stopping(since: now))
    }

    /// Ends the app's flow for good: disconnects.
    private func finish() {
        chip.stop()
        let client = state.withLock { s in
            defer {
                s.connection = nil
                s.stage = .done
            }
            return s.connection?.client
        }
        if let client { air.disconnect(client) }
    }

    /// The flow failed: disconnect and try again later.
    private func giveUp(now: Int64) {
        chip.stop()
        let client = state.withLock { s in
            defer {
                s.connection = nil
                s.tally.failures += 1
                s.stage = .idle(retryAt: now + Self.retryMilliseconds)
            }
            return s.connection?.client
        }
        if let client { air.disconnect(client) }
    }

    // MARK: Jetpack

    /// docs/android-jetpack.md: every message starts 'J', layout 1, kind.
    private enum Jetpack {
        static let header: [UInt8] = [0x4A, 0x01]
        static let parameters: UInt8 = 0x01
        static let stop: UInt8 = 0x02
        static let accepted: UInt8 = 0x81
        static let stopped: UInt8 = 0x82
        static let refused: UInt8 = 0x83
        /// Jetpack's update rate types and their intervals for config type 1 (androidx
        /// `RangingParameters`; AOSP's androidx_backend `Utils.java`): automatic 240 ms,
        /// infrequent 600, frequent 120.
        static let rates: [(type: UInt8, interval: UInt16)] = [(1, 240), (2, 600), (3, 120)]
    }

    /// Draws its role, rate, slot, session and key, and writes the parameters: a controller
    /// names channel 9 and a preamble, a controlee leaves both to the rig (0, 0).
    private func sendJetpackParameters(on client: GATTClient, now: Int64) {
        let (choice, key) = state.withLock { s in
            let controller = Bool.random(using: &s.random)
            let rate = Jetpack.rates.randomElement(using: &s.random)!
            let choice = Choice(
                sessionID: UInt32.random(in: 1...UInt32.max, using: &s.random), configID: 1, channel: controller ? 9 : 0,
                preambleIndex: controller ? UInt8.random(in: 9...12, using: &s.random) : 0, intervalMilliseconds: rate.interval,
                slotMilliseconds: UInt8.random(in: 1...2, using: &s.random), rigInitiates: !controller, rigControls: !controller)
            return (choice, (0..<8).map { _ in UInt8.random(in: 0...255, using: &s.random) })
        }
        let rate = Jetpack.rates.first { $0.interval == choice.intervalMilliseconds }!.type
        var message = Jetpack.header + [Jetpack.parameters, UInt8(address & 0xFF), UInt8(address >> 8)]
        message += [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: choice.sessionID >> $0) } + [0, 0, 0, 0]
        message += [choice.configID, choice.channel, choice.preambleIndex, rate, choice.slotMilliseconds, choice.rigControls ? 0 : 1]
        message += [UInt8(key.count)] + key
        state.withLock { $0.pending = (choice, key) }
        guard write(message, on: client) else { return giveUp(now: now) }
        setStage(.configuring(since: now))
    }

    /// The rig's answer on the jetpack characteristic: "accepted" (its address, role, channel and
    /// preamble) starts the chip; "stopped" ends a session; "refused" gives the connection up.
    private func jetpackAnswer(_ value: [UInt8], now: Int64) {
        guard value.count >= 3, Array(value[0..<2]) == Jetpack.header else { return }
        switch (value[2], stage) {
        case (Jetpack.accepted, .configuring):
            guard value.count == 8, let (chosen, key) = state.withLock({ $0.pending }), value[5] == (chosen.rigControls ? 1 : 0) else {
                return giveUp(now: now)
            }
            var choice = chosen
            (choice.channel, choice.preambleIndex) = (value[6], value[7])
            startChip(choice, key: key, rigAddress: [value[3], value[4]])
            state.withLock { s in
                s.tally.configurations.append(choice)
                s.tally.started += 1
                s.stage = .ranging
            }
        case (Jetpack.stopped, .stopping):
            state.withLock { $0.tally.stopped += 1 }
            finish()
        case (Jetpack.stopped, .ranging), (Jetpack.refused, .configuring):
            giveUp(now: now)
        default:
            break
        }
    }
}
