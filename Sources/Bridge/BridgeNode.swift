import BLE
import Events
import Logging
import PeerProtocol
import UCI
import Synchronization
import UCIHost

/// One rig: a UWB radio, a BLE adapter, the peer registry, and the event output.
///
/// Inputs from both radios and the clock go through one inbox and are handled one at a time;
/// each peer's state lives in its own `PeerSession` actor inside the registry.
public final class BridgeNode: Sendable {
    public let identity: NodeIdentity
    public let uwb: UCIHost
    /// The radios as first attached, by the names their `device` events carry.
    public let uwbBackend: String
    public let bleBackend: String
    private let ble: any BLEAdapter
    private let inbox: NodeInbox
    private let registry: PeerRegistry
    private let context: PeerContext
    /// Set by `stop`, so the radios closing on purpose is not reported as a device loss.
    private let stopping = Atomic<Bool>(false)
    /// Opens the UWB board again after it went away; nil where a lost board cannot come back.
    private let reconnectUWB: (@Sendable () async throws -> any UCITransport)?
    private let reconnecting = Atomic<Bool>(false)

    /// - Parameters:
    ///   - reconnectUWB: reopens the board after it disappeared (unplugged, connection lost);
    ///     retried every second until it succeeds.
    ///   - tracker: set by the simulation so it can wait for the node to go idle.
    ///   - seed: seeds this node's choices (session ids, STS values) for reproducible runs.
    public init(
        identity: NodeIdentity, config: BridgeConfig, uwbTransport: any UCITransport, ble: any BLEAdapter,
        events: EventStream, time: any TimeSource, logger: Logger, seed: UInt64,
        reconnectUWB: (@Sendable () async throws -> any UCITransport)? = nil, tracker: WorkTracker? = nil
    ) {
        let inbox = NodeInbox(tracker: tracker, limit: config.inputQueueLimit)
        var logger = logger
        logger[metadataKey: "node"] = "\(identity.name)"
        let uwb = UCIHost(transport: uwbTransport, logger: logger) { inbox.post($0.map(NodeInput.uwb)) }
        let tag = identity.tag
        let sharedSessions =
            config.controleesPerSession > 1
            ? SharedSessions(
                uwb: uwb, profile: config.uwb, ownAddress: identity.uwbShortAddress, limit: config.controleesPerSession,
                logger: logger, seed: seed ^ 0x5EED_0F_0A11)
            : nil
        let context = PeerContext(
            identity: identity, config: config, uwb: uwb, sharedSessions: sharedSessions, ble: ble, logger: logger, time: time,
            emitBodies: { bodies in
                events.emit(bodies.map { Event(node: tag, body: $0) }, timestampMilliseconds: time.nowMilliseconds())
            },
            takeShed: { (events.takeShedRanges(node: tag), inbox.takeDropped()) })
        self.identity = identity
        self.uwb = uwb
        self.uwbBackend = uwbTransport.description
        self.bleBackend = ble.backendName
        self.reconnectUWB = reconnectUWB
        self.ble = ble
        self.inbox = inbox
        self.context = context
        self.registry = PeerRegistry(context: context, seed: seed)
    }

    /// Brings both radios up and reports them as `device` events. Throws if the UWB radio does not
    /// answer; a BLE failure is reported and the node keeps running without discovery.
    public func start() async throws {
        await uwb.start()
        try await bringUpUWB()

        let inbox = self.inbox
        do {
            try await ble.start { inbox.post(.ble($0)) }
            let advert = Advertisement(
                group: identity.group, peerID: identity.peerID, uwbShortAddress: identity.uwbShortAddress,
                capabilities: [.uwb], psm: context.config.psm)
            try await ble.advertise(advert.advertisingData(), scanResponse: Self.nameAD(identity.name))
            try await ble.startScanning()
            context.emit(.device(.init(radio: .ble, state: .ready, backend: ble.backendName)))
        } catch {
            context.logger.error("Bluetooth unavailable", metadata: ["error": "\(error)"])
            context.emit(.device(.init(radio: .ble, state: .unavailable, backend: ble.backendName, detail: ["error": "\(error)"])))
        }
    }

    /// Resets the UWBS and reports it ready with what it says about itself; learns from its
    /// capabilities how many ranging sessions it runs at once, unless the config says.
    private func bringUpUWB() async throws {
        try await uwb.reset()
        let info = try await uwb.deviceInfo()
        if context.config.rangingSessions == nil {
            // Boards that do not answer GET_CAPS_INFO, or omit the count, get the default.
            let capabilities = (try? await uwb.capabilities()) ?? []
            await registry.setRangingBudget(Capabilities.maxRangingSessions(in: capabilities) ?? BridgeConfig.defaultRangingSessions)
        }
        context.emit(
            .device(
                .init(
                    radio: .uwb, state: .ready, backend: await uwb.transportDescription,
                    detail: [
                        "uci": info.uciVersion.description, "mac": info.macVersion.description,
                        "phy": info.phyVersion.description, "vendor": info.vendorData.hexString,
                    ])))
    }

    /// Handles inputs until `stop` is called, a batch at a time: the range notifications in a
    /// row go to the registry together, everything else one by one, all in arrival order.
    public func run() async {
        var lastDeviceState: DeviceState? = .ready
        var ranges: [RangeData] = []
        while let batch = await inbox.next() {
            for input in batch {
                if case .uwb(.notification(.rangeData(let data))) = input {
                    ranges.append(data)
                    continue
                }
                if !ranges.isEmpty {
                    await registry.handle(ranges)
                    ranges = []
                }
                await handle(input, lastDeviceState: &lastDeviceState)
            }
            if !ranges.isEmpty {
                await registry.handle(ranges)
                ranges = []
            }
            inbox.handled(batch)
        }
    }

    private func handle(_ input: NodeInput, lastDeviceState: inout DeviceState?) async {
        switch input {
        case .ble(.adapterPowered(let on)):
            context.emit(
                .device(
                    .init(
                        radio: .ble, state: on ? .ready : .unavailable, backend: ble.backendName,
                        detail: on ? [:] : ["error": "the adapter was powered off"])))
        case .ble(let event):
            await registry.handle(event)
        case .uwb(.notification(let notification)):
            if case .deviceStatus(let state) = notification, state != lastDeviceState {
                lastDeviceState = state
                context.emit(.device(.init(radio: .uwb, state: Self.eventState(state), backend: await uwb.transportDescription)))
            }
            await registry.handle(notification)
        case .uwb(.closed(let error)):
            guard !stopping.load(ordering: .acquiring) else { return }
            context.logger.error("UWB radio lost", metadata: ["error": "\(error)"])
            context.emit(
                .device(.init(radio: .uwb, state: .removed, backend: await uwb.transportDescription, detail: ["error": "\(error)"])))
            await registry.uwbLost()
            startReconnecting()
        case .uwbReattached(let transport):
            await uwb.attach(transport)
            do {
                try await bringUpUWB()
                lastDeviceState = .ready
                await registry.resumeRanging()
            } catch {
                // The host reports the failed transport as closed, which starts another attempt.
                context.logger.error("UWB board came back but did not come up", metadata: ["error": "\(error)"])
            }
        case .tick:
            await registry.tick()
        }
    }

    /// Reopens the UWB board in the background, once a second, until it answers or we stop.
    private func startReconnecting() {
        guard let reconnectUWB, !reconnecting.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let inbox = self.inbox
        let logger = context.logger
        Task {
            logger.notice("waiting for the UWB board to come back")
            while !self.stopping.load(ordering: .acquiring) {
                do {
                    let transport = try await reconnectUWB()
                    logger.notice("UWB board is back", metadata: ["transport": "\(transport)"])
                    self.reconnecting.store(false, ordering: .releasing)
                    inbox.post(.uwbReattached(transport))
                    return
                } catch {
                    logger.debug("UWB board not back yet", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    /// Posts a clock tick: timeouts, repeats of unanswered peer messages, the `nearest` report.
    public func tick() {
        inbox.post(.tick)
    }

    /// Says goodbye to peers, stops the radios, and ends `run`.
    public func stop() async {
        stopping.store(true, ordering: .releasing)
        await registry.closeAll()
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

    /// Complete Local Name AD structure (scan response data on real radios).
    private static func nameAD(_ name: String) -> [UInt8] {
        let bytes = Array(name.utf8.prefix(29))
        return [UInt8(bytes.count + 1), 0x09] + bytes
    }
}

extension Array where Element == UInt8 {
    var hexString: String {
        map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
