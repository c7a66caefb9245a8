import Bridge
import GATTServer
import Synchronization
import UCI

/// An attendee's iPhone running an event's Nearby Interaction app (scenario node kind `iphone`),
/// driven by the simulation step by step like an `Attacker`. It is written from Apple's and
/// AOSP's documents, not from the rig's code, so that the rig is checked against them:
///
/// - **BLE**: the message flow of Apple's accessory sample app and Qorvo's NI app over the
///   rig's GATT service (Qorvo NI if the rig offers it, else Nordic UART): subscribe to the rig's
///   notifications, write `0x0A` initialize, read the accessory configuration data from `0x01`,
///   write `0x0B` with a shareable configuration it draws itself, wait for `0x02` UWB did start;
///   at `stopAt`, `0x0C` stop, wait for `0x03`, disconnect. A lost connection ends its session;
///   it tries again a second later while a rig is in range.
/// - **UWB**: its chip is a virtual UWBS it configures as the controller and initiator of the
///   DS-TWR session its blob implies, with the FiRa values AOSP's mapping gives that blob
///   (`IosAccessoryRangingParameters`: CONFIG_UNICAST_DS_TWR, static STS, vendor id 0x004C,
///   addresses and vendor id in the octets AOSP's code writes). The air ranges it with the rig
///   only if the rig's board was given the same parameters.
///
/// Which ranging interval a real iPhone picks for a 1.1 accessory is not published: this one
/// uses 120 ms (a 2.0 accessory's wish when it states one).
package final class EmulatedIPhone: Sendable {
    /// What the phone is doing.
    package enum Stage: Equatable, Sendable {
        /// Not connected; tries again at `retryAt` (ms) if a rig is in range.
        case idle(retryAt: Int64)
        /// Wrote 0x0A, waits for 0x01.
        case initializing(since: Int64)
        /// Wrote 0x0B, waits for 0x02.
        case starting(since: Int64)
        case ranging
        /// Wrote 0x0C, waits for 0x03.
        case stopping(since: Int64)
        /// Its app stopped for good (`stopAt`).
        case done
    }

    /// Counts for tests and the demo's summary.
    package struct Tally: Equatable, Sendable {
        /// 0x02 received: the rig's board runs the session.
        package var started = 0
        /// 0x03 received after its own 0x0C.
        package var stopped = 0
        /// Connections that broke or timed out before the flow's end.
        package var failures = 0
    }

    private struct Connection {
        var client: GATTClient
        var rig: Int
        var transport: PhoneTransport
    }

    private struct State {
        var random: SplitMix64
        var stage: Stage = .idle(retryAt: 0)
        var connection: Connection?
        var tally = Tally()
    }

    /// Apple's message ids (accessory protocol; Apple's and Qorvo's sample apps).
    private enum MessageID {
        static let accessoryConfigurationData: UInt8 = 0x01
        static let uwbDidStart: UInt8 = 0x02
        static let uwbDidStop: UInt8 = 0x03
        static let initialize: UInt8 = 0x0A
        static let configureAndStart: UInt8 = 0x0B
        static let stop: UInt8 = 0x0C
    }

    /// How long the app waits for each answer before it gives the connection up (ms).
    static let answerTimeoutMilliseconds: Int64 = 5000
    static let retryMilliseconds: Int64 = 1000
    static let defaultIntervalMilliseconds: UInt16 = 120

    private let air: GATTAir
    private let chip: EmulatedPhoneChip
    private let body: Int
    /// The phone's own UWB short address, drawn once.
    private let address: UInt16
    /// When its app stops for good (ms), if ever.
    private let stopAt: Int64?
    private let state: Mutex<State>

    init(world: World, air: GATTAir, body: Int, seed: UInt64) {
        self.air = air
        self.body = body
        var random = SplitMix64(seed: seed ^ 0x1F0E_E1A5)
        self.address = UInt16.random(in: 1...0xFFFE, using: &random)
        self.stopAt = world.scenario.nodes[body].stopAt.map { Int64(($0 * 1000).rounded()) }
        self.state = Mutex(State(random: random))
        self.chip = EmulatedPhoneChip(world: world, body: body)
    }

    package var stage: Stage { state.withLock { $0.stage } }
    package var tally: Tally { state.withLock { $0.tally } }

    /// One step: what the rig sent, then timeouts, the stop, and a new connection.
    func act(now: Int64) {
        for delivery in air.take(phone: body) { receive(delivery, now: now) }
        let stage = self.stage
        switch stage {
        case .idle(let retryAt):
            if let stopAt, now >= stopAt { return setStage(.done) }
            if now >= retryAt { connect(now: now) }
        case .initializing(let since), .starting(let since):
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

    /// Connects to the nearest serving rig, subscribes and writes initialize.
    private func connect(now: Int64) {
        for (rig, database) in air.servers(near: body) {
            guard let transport = PhoneTransport.allCases.first(where: { $0.phoneProtocol == .appleAccessory && database.characteristic($0.characteristics.write) != nil }),
                let client = air.connect(phone: body, to: rig)
            else { continue }
            state.withLock { $0.connection = Connection(client: client, rig: rig, transport: transport) }
            guard air.subscribe(to: transport.characteristics.notify, on: client),
                air.write([MessageID.initialize], to: transport.characteristics.write, on: client)
            else { return giveUp(now: now) }
            return setStage(.initializing(since: now))
        }
        setStage(.idle(retryAt: now + Self.retryMilliseconds))
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
            guard let id = value.first else { return }
            switch (id, stage) {
            case (MessageID.accessoryConfigurationData, .initializing):
                configureAndStart(accessoryData: Array(value.dropFirst()), now: now)
            case (MessageID.uwbDidStart, .starting):
                state.withLock { s in
                    s.tally.started += 1
                    s.stage = .ranging
                }
            case (MessageID.uwbDidStop, .stopping):
                state.withLock { $0.tally.stopped += 1 }
                finish()
            case (MessageID.uwbDidStop, .ranging), (MessageID.uwbDidStop, .starting):
                // The rig ended the session (its board went away, it gave up starting).
                giveUp(now: now)
            default:
                break
            }
        }
    }

    /// Reads the rig's accessory configuration data (Apple's accessory protocol R4: a 16-octet
    /// header whose octet 15 counts the UWB configuration data after it; in that data, the
    /// version at +0, the device role at +16 and the accessory's short address at +17), draws
    /// the shareable configuration, starts its chip's session and writes 0x0B.
    private func configureAndStart(accessoryData data: [UInt8], now: Int64) {
        guard data.count >= 16, data[0] == 1, data[1] == 0, Int(data[15]) == data.count - 16, data.count - 16 >= 21,
            let connection = state.withLock({ $0.connection })
        else { return giveUp(now: now) }
        let uwb = Array(data[16...])
        let major = UInt16(uwb[0]) | UInt16(uwb[1]) << 8
        let rigAddress = [uwb[17], uwb[18]]
        var interval = Self.defaultIntervalMilliseconds
        if major == 2, uwb.count >= 32 {
            let wished = UInt16(uwb[30]) | UInt16(uwb[31]) << 8
            if wished > 0 { interval = wished }
        }
        let blob = state.withLock { s in
            Self.shareableConfiguration(
                sessionID: UInt32.random(in: 1...UInt32.max, using: &s.random), preambleCode: UInt8.random(in: 9...12, using: &s.random),
                intervalMilliseconds: interval, stsIV: (0..<6).map { _ in UInt8.random(in: 0...255, using: &s.random) },
                phoneAddress: address)
        }
        startChip(blob: blob, rigAddress: rigAddress)
        guard air.write([MessageID.configureAndStart] + blob, to: connection.transport.characteristics.write, on: connection.client) else {
            return giveUp(now: now)
        }
        setStage(.starting(since: now))
    }

    /// A version 1.1 shareable configuration (Apple's accessory protocol R4; AOSP's
    /// `IosAccessoryConfigurationData.AppleUwbConfigData` reads the same), little-endian:
    /// major 1, minor 1, length 25, country code, session id, preamble code, channel 9, 6 slots
    /// per round, slot duration 2400 RSTU, the interval, round control 0x03, the STS IV, the
    /// phone's short address, clock drift 20 ppm.
    static func shareableConfiguration(
        sessionID: UInt32, preambleCode: UInt8, intervalMilliseconds: UInt16, stsIV: [UInt8], phoneAddress: UInt16
    ) -> [UInt8] {
        func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        var blob: [UInt8] = le16(1) + le16(1) + [25]
        blob += Array("US".utf8)
        blob += [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: sessionID >> $0) }
        blob += [preambleCode, 9]
        blob += le16(6)
        blob += le16(2400)
        blob += le16(intervalMilliseconds)
        blob.append(0x03)
        blob += stsIV
        blob += le16(phoneAddress)
        blob += le16(20)
        return blob
    }

    /// Configures its chip as the blob's controller (AOSP's CONFIG_UNICAST_DS_TWR values for
    /// what the blob leaves open) and starts it.
    private func startChip(blob: [UInt8], rigAddress: [UInt8]) {
        let sessionID = UInt32(blob[7]) | UInt32(blob[8]) << 8 | UInt32(blob[9]) << 16 | UInt32(blob[10]) << 24
        let config: [(AppConfigID, [UInt8])] = [
            (.deviceType, [0x01]),  // controller
            (.rangingRoundUsage, [0x02]),  // DS-TWR deferred
            (.stsConfig, [0x00]),  // static STS
            (.multiNodeMode, [0x00]),  // unicast
            (.channelNumber, [blob[12]]),
            (.numberOfControlees, [0x01]),
            (.deviceMacAddress, [blob[26], blob[27]]),  // its address, octets as in its blob
            (.dstMacAddress, rigAddress),  // the rig's, octets as in the rig's blob
            (.slotDuration, [blob[15], blob[16]]),
            (.rangingDuration, [blob[17], blob[18], 0, 0]),
            (.rangingRoundControl, [blob[19]]),
            (.deviceRole, [0x01]),  // initiator
            (.preambleCodeIndex, [blob[11]]),
            (.slotsPerRangingRound, [blob[13]]),
            (.vendorID, [0x4C, 0x00]),  // Apple's company id as AOSP's test app writes it
            (.staticSTSIV, Array(blob[20..<26])),
            (.hoppingMode, [blob.count > 34 ? blob[34] : 0]),  // version 2.0's hopping octet
        ]
        chip.start(sessionID: sessionID, config: config)
    }

    /// Its app's stop: 0x0C, its chip stopped, then it waits for 0x03.
    private func stop(now: Int64) {
        guard let connection = state.withLock({ $0.connection }) else { return setStage(.done) }
        chip.stop()
        guard air.write([MessageID.stop], to: connection.transport.characteristics.write, on: connection.client) else { return finish() }
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
}
