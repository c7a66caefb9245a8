import BLE
import Events
import GATTServer
import Logging
import PeerProtocol
import PeerSecurity
import Proximity
import StreamIO
import Synchronization
import UCI
import UCIHost

/// One rig: a UWB radio, a BLE adapter, the node core, and the event output.
///
/// Inputs from both radios, the board's session manager and the clock go through one inbox and
/// are handled one at a time by `run`, which hands each to `NodeCore` (every peer's state, one
/// synchronous owner) and performs the effects it answers with. Nothing on that path waits on a
/// radio: the adapter's link calls return at once, and UCI commands run in `UWBSessions`' worker
/// and come back as inputs, so a slow board delays only the peer whose session it sets up.
package final class BridgeNode: Sendable {
    package let identity: NodeIdentity
    package let uwb: UCIHost
    /// The radios as first attached, by the names their `device` events carry.
    package let uwbBackend: String
    package let bleBackend: String
    /// The peer channel's security as this node runs it, key seed included (for `--capture`).
    package var security: PeerSecuritySettings { channels.settings }
    private let ble: any BLEAdapter
    private let inbox: NodeInbox
    /// Handed to `run`'s loop, its only user from then on (`start` tells it the board first).
    private let core: Mutex<NodeCore?>
    private let config: BridgeConfig
    private let logger: Logger
    private let time: any TimeSource
    private let channels: PeerChannels
    private let boardCorrection: BoardCorrection
    private let events: NodeEmitter
    private let uwbSessions: UWBSessions
    private let sessionsWorker = Mutex<Task<Void, Never>?>(nil)
    /// Set by `stop`, so the radios closing on purpose is not reported as a device loss.
    private let stopping = Atomic<Bool>(false)
    /// Resumed by `run` once the graceful stop is done.
    private let stopped = WaiterList(false) { $0 }
    /// Opens the UWB board again after it went away; nil where a lost board cannot come back.
    private let reconnectUWB: (@Sendable () async throws -> any UCITransport)?
    private let reconnecting = Atomic<Bool>(false)
    /// Waits between reopening attempts, and when the board was last opened (node time, ms).
    private let backoff: Mutex<(policy: ReconnectBackoff, upSince: Int64)>
    private let uwbClock: any Clock<Duration>
    private let loop: EventLoop?
    /// Serves the rig's GATT database to phones; nil where the node serves none.
    private let gatt: (any GATTBackend)?
    /// When the private advert last changed its rotation nonce (node time, ms).
    private let advertRotatedAt = Atomic<Int64>(0)

    /// - Parameters:
    ///   - reconnectUWB: reopens the board after it disappeared (unplugged, connection lost);
    ///     retried as `ReconnectBackoff` says until it succeeds.
    ///   - tracker: set by the simulation so it can wait for the node to go idle.
    ///   - uwbClock: times the board's answers (UCI command timeouts) and the waits before
    ///     reopening it; tests move it by hand.
    ///   - loop: the thread the node's work runs on (the UCI host's reader, the loop, the
    ///     core, the board's session worker); give the UWB transport the same loop, and a
    ///     notification goes from `read` to its event line without a thread hand-off. Nil runs
    ///     it all on Swift's global pool.
    ///   - gatt: the GATT backend phones write to; started with the radios, stopped with the node.
    ///   - seed: seeds this node's choices (session ids, STS values) for reproducible runs.
    package init(
        identity: NodeIdentity, config: BridgeConfig, uwbTransport: any UCITransport, ble: any BLEAdapter,
        events: EventStream, time: any TimeSource, logger: Logger, seed: UInt64,
        reconnectUWB: (@Sendable () async throws -> any UCITransport)? = nil, tracker: WorkTracker? = nil,
        uwbClock: any Clock<Duration> = ContinuousClock(), loop: EventLoop? = nil, gatt: (any GATTBackend)? = nil
    ) {
        let inbox = NodeInbox(tracker: tracker, limit: config.inputQueueLimit)
        var logger = logger
        logger[metadataKey: "node"] = "\(identity.name)"
        let uwb = UCIHost(transport: uwbTransport, clock: uwbClock, logger: logger, executor: loop) { inbox.post($0.lazy.map(NodeInput.uwb)) }
        let tag = identity.tag
        let uwbSessions = UWBSessions(
            uwb: uwb, dialect: config.uwbDialect.dialect, profile: config.uwb, ownAddress: identity.uwbShortAddress, controleesPerSession: config.controleesPerSession,
            logger: logger, seed: seed ^ 0x5EED_0F_0A11, tracker: tracker
        ) { inbox.post(.uwbSessions($0)) }
        let channels = PeerChannels(settings: config.security)
        let boardCorrection = BoardCorrection(config.rangeCorrection.correction(forBoard: ""))
        let environment = NodeCore.Environment(
            identity: identity, config: config, logger: logger, channels: channels, boardCorrection: boardCorrection,
            takeShed: { (events.takeShedRanges(node: tag), inbox.takeDropped()) })
        self.identity = identity
        self.uwb = uwb
        self.uwbBackend = uwbTransport.description
        self.bleBackend = ble.backendName
        self.reconnectUWB = reconnectUWB
        self.loop = loop
        self.gatt = gatt
        self.uwbClock = uwbClock
        self.backoff = Mutex((ReconnectBackoff(seed: seed ^ 0xBAC0_FF), time.nowMilliseconds()))
        self.ble = ble
        self.inbox = inbox
        self.config = config
        self.logger = logger
        self.time = time
        self.channels = channels
        self.boardCorrection = boardCorrection
        self.events = NodeEmitter(node: tag) { events.emit($0, timestampMilliseconds: time.wallMilliseconds()) }
        self.uwbSessions = uwbSessions
        self.core = Mutex(NodeCore(environment: environment, seed: seed, now: time.nowMilliseconds()))
    }

    /// Brings both radios up and reports them as `device` events. Throws if the UWB radio does not
    /// answer; a BLE failure is reported and the node keeps running without discovery.
    package func start() async throws {
        await uwb.start()
        let board: BoardDescription
        do {
            board = try await uwbSessions.bringUpNow()
        } catch {
            await uwb.shutdown()
            throw NodeStartError.uwbDidNotComeUp(board: await uwb.transportDescription, error)
        }
        core.withLock { $0?.learn(board) }
        await reportReady(board)
        let uwbSessions = self.uwbSessions
        let loop = self.loop
        sessionsWorker.withLock { $0 = Task(executorPreference: loop) { await uwbSessions.run() } }

        let inbox = self.inbox
        gatt?.start { inbox.post(.gatt($0)) }
        do {
            try await ble.start { inbox.post(.ble($0)) }
            try await advertise()
            try await ble.startScanning()
            events.emit(.device(.init(radio: .ble, state: .ready, backend: ble.backendName, detail: securityDetail)))
        } catch {
            logger.error("Bluetooth unavailable", metadata: ["error": "\(error)"])
            events.emit(.device(.init(radio: .ble, state: .unavailable, backend: ble.backendName, detail: ["error": "\(error)"])))
            guard !config.bluetoothRequired else {
                await ble.stop()
                await uwb.shutdown()
                throw NodeStartError.bluetoothUnavailable(adapter: ble.backendName, error)
            }
        }
    }

    /// What the `device` event says about the peer channel's security: the mode, and the event
    /// key's fingerprint (never the key) so that rigs can be checked to share one.
    private var securityDetail: [String: String] {
        var detail = ["security": config.security.mode]
        if let key = config.security.groupKey { detail["key"] = key.fingerprint }
        return detail
    }

    /// Our advert: v1 with the name in the scan response; with an event key the private advert
    /// of a new rotation period, and no name (a name would link the periods; peers learn it from
    /// the encrypted `hello`).
    private func advertise() async throws {
        var advert = Advertisement(
            group: identity.group, peerID: identity.peerID, uwbShortAddress: identity.uwbShortAddress,
            capabilities: [.uwb, .oneToMany], psm: config.psm)
        guard let key = config.security.groupKey else {
            return try await ble.advertise(advert.advertisingData(), scanResponse: AdvertisingData.localName(identity.name).bytes)
        }
        if uwbSessions.supportsProvisionedSTS { advert.capabilities.insert(.provisionedSTS) }
        if uwbSessions.hopsRounds { advert.capabilities.insert(.roundHopping) }
        if ble.boundAddresses { advert.capabilities.insert(.addressBound) }
        advertRotatedAt.store(time.nowMilliseconds(), ordering: .relaxed)
        let nonce = Array(channels.draw("advert nonce").prefix(PrivateAdvert.nonceSize))
        try await ble.advertise(PrivateAdvert(key: key).advertisingData(for: advert, nonce: nonce), scanResponse: [])
    }

    /// Starts the next rotation period of the private advert when this one is over. The adapter
    /// call runs beside the loop: the loop never waits on a radio.
    private func rotateAdvertIfDue() {
        let security = config.security
        guard security.groupKey != nil,
            time.nowMilliseconds() - advertRotatedAt.load(ordering: .relaxed) >= security.advertRotationMilliseconds
        else { return }
        advertRotatedAt.store(time.nowMilliseconds(), ordering: .relaxed)
        let logger = logger
        Task {
            do {
                try await self.advertise()
            } catch {
                logger.warning("could not change the advert for its new rotation period", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Reports the board ready with what it says about itself.
    private func reportReady(_ board: BoardDescription) async {
        let info = board.info
        var detail = [
            "uci": info.uciVersion.description, "mac": info.macVersion.description,
            "phy": info.phyVersion.description, "vendor": info.vendorDataHex,
        ]
        if let country = board.countryCode {
            detail["country"] = country
        } else if let asked = config.uwb.countryCode {
            logger.warning("the UWB board refused the country code; it keeps its own region", metadata: ["country": "\(asked)"])
        }
        let transport = await uwb.transportDescription
        let key = info.boardKey(serial: usbSerial(inTransport: transport))
        let correction = config.rangeCorrection.correction(forBoard: key)
        boardCorrection.correction = correction
        detail["board"] = key
        detail["bias"] = correction.table == nil ? "none" : "\(correction.tableName) at the reported RSSI, none without it"
        detail["rssi"] = board.reportsRSSI ? "asked (RSSI_REPORTING 1)" : "none (UCI \(info.uciVersion) range data has no RSSI)"
        detail["policy"] = correction.policy(asksRSSI: board.reportsRSSI)
        detail["offset"] = correction.calibrated ? "\((correction.offsetMetres * 1000).rounded() / 1000) m" : "uncalibrated"
        if !correction.calibrated {
            logger.notice(
                "the UWB board has no calibration in the config; readings may be off by a constant (run `nearby-bridge calibrate`)",
                metadata: ["board": "\(key)"])
        }
        var state = Event.Device.State.ready
        if let channels = board.supportedChannels { detail["channels"] = channels.map(String.init).joined(separator: ",") }
        // Every rig proposes and expects these: a board without them ranges with nobody.
        let unmet = board.unmetNeeds(channel: config.uwb.channel, preambleCodes: config.uwb.preambleCodes)
        if !unmet.isEmpty {
            let error = unmet.joined(separator: "; ")
            logger.error("\(error)", metadata: ["board": "\(key)"])
            detail["error"] = error
            state = .error
        }
        events.emit(.device(.init(radio: .uwb, state: state, backend: transport, detail: detail)))
    }

    /// Handles inputs until `stop`, a batch at a time: the range notifications in a row go to
    /// the core together, everything else one by one, all in arrival order. Ends with the
    /// graceful stop: goodbye to peers, their UWB sessions deinitialised, radios closed.
    package func run() async {
        guard var core = core.withLock({ $0.take() }) else { return }
        await withTaskExecutorPreference(loop) { await loopOverInputs(with: &core) }
        stopped.update { $0 = true }
    }

    /// Owns the core: handing it an input is a plain call, not an actor hop (on an `EventLoop`, a
    /// hop would be one more job per batch).
    private func loopOverInputs(with core: inout NodeCore) async {
        var lastDeviceState: DeviceState? = .ready
        var ranges: [RangeData] = []
        var watch = BoardWatch(now: time.nowMilliseconds())
        loop: while let batch = await inbox.next() {
            if batch.contains(where: \.isFromBoard) { watch.heard(at: time.nowMilliseconds()) }
            for input in batch {
                if case .uwb(.notification(.rangeData(let data))) = input {
                    ranges.append(data)
                    continue
                }
                if !ranges.isEmpty {
                    perform(.ranges(ranges), on: &core)
                    ranges.removeAll(keepingCapacity: true)
                }
                if case .tick = input, watch.shouldProbe(at: time.nowMilliseconds()) { uwbSessions.probe() }
                if case .stop = input {
                    perform(.stop, on: &core)
                    await shutDown()
                    inbox.handled(batch)
                    break loop
                }
                await handle(input, lastDeviceState: &lastDeviceState, core: &core)
            }
            if !ranges.isEmpty {
                perform(.ranges(ranges), on: &core)
                ranges.removeAll(keepingCapacity: true)
            }
            inbox.handled(consume batch)
        }
    }

    /// What only the node does with an input (its `device` events, the board's recovery), then
    /// the core's part.
    private func handle(_ input: NodeInput, lastDeviceState: inout DeviceState?, core: inout NodeCore) async {
        switch input {
        case .ble(.adapterPowered(let on)):
            events.emit(
                .device(
                    .init(
                        radio: .ble, state: on ? .ready : .unavailable, backend: ble.backendName,
                        detail: on ? [:] : ["error": "the adapter was powered off"])))
        case .uwb(.notification(.deviceStatus(let state))) where state != lastDeviceState:
            lastDeviceState = state
            events.emit(.device(.init(radio: .uwb, state: Self.eventState(state), backend: await uwb.transportDescription)))
        case .uwb(.closed(let error)):
            guard !stopping.load(ordering: .acquiring) else { return }
            logger.error("UWB radio lost", metadata: ["error": "\(error)"])
            events.emit(
                .device(.init(radio: .uwb, state: .removed, backend: await uwb.transportDescription, detail: ["error": "\(error)"])))
            startReconnecting()
        case .uwbReattached(let transport):
            backoff.withLock { $0.upSince = time.nowMilliseconds() }
            await uwb.attach(transport)
            uwbSessions.bringUp()
        case .uwbSessions(.boardReady(let board)):
            lastDeviceState = .ready
            await reportReady(board)
        case .uwbSessions(.boardUnresponsive(let error)):
            logger.error("UWB board stopped answering; reopening it", metadata: ["error": "\(error)"])
            events.emit(
                .device(.init(radio: .uwb, state: .error, backend: await uwb.transportDescription, detail: ["error": "\(error)"])))
            // Closing the transport reports it lost, and the usual path reopens the board, resets it
            // and re-creates the sessions.
            await uwb.shutdown()
        case .uwbSessions(.boardFailed(let error)):
            logger.error("UWB board came back but did not come up", metadata: ["error": "\(error)"])
            // A failed transport is reported closed, which starts another attempt. A board that
            // is connected but left its bring-up unanswered (a reset answer lost, however often
            // it was sent) is closed here, so that the same path reopens it after a back-off.
            if error == .closed || error.underlying != nil { break }
            events.emit(
                .device(.init(radio: .uwb, state: .error, backend: await uwb.transportDescription, detail: ["error": "\(error)"])))
            await uwb.shutdown()
        case .tick:
            rotateAdvertIfDue()
        default:
            break
        }
        perform(input, on: &core)
    }

    /// Hands `input` to the core and performs its effects in order. None waits; the answers some
    /// have at once go back to the core as inputs, and their effects are performed before the
    /// rest of these.
    private func perform(_ input: NodeInput, on core: inout NodeCore) {
        let effects = core.handle(input, now: time.nowMilliseconds())
        for effect in effects {
            switch effect {
            case .emit(let batch):
                events.emit(batch)
            case .send(let frame, let link):
                do {
                    try ble.send(frame, on: link)
                } catch BLEAdapterError.unknownLink {
                    // The link closed under us; its close is on its way as an input.
                    logger.debug("send on a closed link", metadata: ["link": "\(link)"])
                } catch {
                    logger.warning("send failed", metadata: ["link": "\(link)", "error": "\(error)"])
                }
            case .connect(let address, let peer):
                let answer: NodeInput
                do {
                    answer = .connectStarted(peer, try ble.connect(to: address))
                } catch {
                    answer = .connectFailed(peer, "\(error)")
                }
                perform(answer, on: &core)
            case .disconnect(let link):
                ble.disconnect(link)
            case .openUWB(let request, let peer):
                uwbSessions.open(peer: peer, request)
            case .closeUWB(let peer):
                uwbSessions.close(peer: peer)
            case .notify(let client, let characteristic, let value):
                gatt?.notify(client, characteristic: characteristic, value: value)
            case .openPhoneUWB(let sessionID, let appConfig, let phone):
                uwbSessions.open(phone: phone, sessionID: sessionID, appConfig: appConfig)
            case .reserveSharedPlace(let controlee, let peer):
                let parameters = uwbSessions.reserve(peer: peer, controlee: controlee)
                perform(.sharedPlaceReserved(peer, parameters), on: &core)
            case .forgetBoardSessions:
                uwbSessions.boardLost()
            }
        }
        core.recycle(consume effects)
    }

    /// Reopens the UWB board in the background until it answers or we stop, waiting as
    /// `ReconnectBackoff` says: at once after a board that had been up a while, longer and longer
    /// while it keeps failing or going away again.
    private func startReconnecting() {
        guard let reconnectUWB, !reconnecting.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let inbox = self.inbox
        let logger = logger
        let now = time.nowMilliseconds()
        var delay = backoff.withLock { $0.policy.delayAfterLoss(upFor: .milliseconds(now - $0.upSince)) }
        Task { [uwbClock] in
            logger.notice("waiting for the UWB board to come back")
            while !self.stopping.load(ordering: .acquiring) {
                if delay > .zero { try? await uwbClock.sleep(for: delay) }
                guard !self.stopping.load(ordering: .acquiring) else { break }
                do {
                    let transport = try await reconnectUWB()
                    logger.notice("UWB board is back", metadata: ["transport": "\(transport)"])
                    self.reconnecting.store(false, ordering: .releasing)
                    inbox.post(.uwbReattached(transport))
                    return
                } catch {
                    logger.debug("UWB board not back yet", metadata: ["error": "\(error)"])
                    delay = self.backoff.withLock { $0.policy.delayAfterFailure() }
                }
            }
        }
    }


    /// Posts a clock tick: timeouts, repeats of unanswered peer messages, the `nearest` report.
    package func tick() {
        inbox.post(.tick)
    }

    /// Asks `run` to stop gracefully, after what is queued before it, and waits until it has:
    /// goodbye to every peer, their UWB sessions stopped and deinitialised, advertising removed,
    /// the board closed. Every way a node ends (a signal, a closed stdout, the end of a
    /// scenario) comes here.
    package func stop() async {
        stopping.store(true, ordering: .releasing)
        inbox.post(.stop)
        await stopped.wait()
    }

    private func shutDown() async {
        uwbSessions.finish()
        await sessionsWorker.withLock { $0 }?.value
        gatt?.stop()
        await ble.stop()
        await uwb.shutdown()
        inbox.finish()
    }

    private static func eventState(_ state: DeviceState) -> Event.Device.State {
        switch state {
        case .ready: .ready
        case .active: .active
        case .error: .error
        }
    }

}

/// Why a node did not start, naming the radio.
package enum NodeStartError: Error, CustomStringConvertible {
    case uwbDidNotComeUp(board: String, UCIHostError)
    case bluetoothUnavailable(adapter: String, any Error)

    package var description: String {
        switch self {
        case .uwbDidNotComeUp(let board, .closed):
            "the UWB board on \(board) ended the stream before answering CORE_DEVICE_RESET: is it a UWB board running FiRa UCI firmware?"
        case .uwbDidNotComeUp(let board, let error):
            "the UWB board on \(board) did not come up: \(error)"
        case .bluetoothUnavailable(let adapter, let error):
            "Bluetooth adapter \(adapter) cannot be used: \(error)"
        }
    }
}

extension NodeInput {
    /// Something the board sent (a notification, a range): it is alive.
    fileprivate var isFromBoard: Bool {
        if case .uwb(.notification) = self { true } else { false }
    }
}
