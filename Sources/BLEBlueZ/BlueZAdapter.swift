import BLE
import BlueZMgmt
import CBlueZ
import Glibc
import Logging
import StreamIO
import Synchronization
import SystemPackage

/// A Bluetooth LE adapter driven through the kernel, beside bluetoothd rather than instead of
/// it: advertising and discovery through the management channel, the peer channel over L2CAP
/// LE credit-based sockets.
///
/// - Advertising uses its own instance, the highest one free at start, because bluetoothd
///   allocates instances from 1 upward and would otherwise be overwritten; when another client
///   adds an instance with our number anyway (mgmt's Advertising Added), ours moves to a free one.
/// - Discovery is restarted every few seconds: controllers report each device about once per
///   discovery, liveness needs fresh RSSI samples, and the kernel ends LE discovery by itself
///   after ~10 s. (Restarting from the Discovering=0 event too would race with our own stop.)
/// - The advertisement carries a kernel-side timeout and is refreshed while we run, because
///   the kernel keeps an instance after its owner dies: a crashed rig must vanish from the air.
/// - On a controller with LE extended advertising (Read Advertising Features lists the secondary
///   PHYs) the instance is added through mgmt's extended interface, with our own interval (the
///   kernel's default for Add Advertising is 1.28 s; discovery and the RSSI samples liveness needs
///   come ten times sooner at 100-150 ms) and the controller's TX power reported back. The PDUs
///   stay legacy (no secondary PHY bit) so that BT 4.x scanners still hear the rig. Other
///   controllers get Add Advertising.
package final class BlueZAdapter: BLEAdapter {
    private struct State {
        var handler: (@Sendable (BLEEvent) -> Void)?
        var instance: UInt8 = 1
        var adapterAddress: [UInt8] = []
        var scanning = false
        /// Owned by the accept thread, which closes it; others may only shut it down.
        var listener: LinkSocket?
        /// Each owned by its reader (see `LinkSocket`).
        var links: [LinkID: LinkSocket] = [:]
        var closedLocally: Set<LinkID> = []
        var nextLink: LinkID = 1
        var addressTypes: [BLEAddress: MgmtAddressType] = [:]
        var advertising: (data: [UInt8], scanResponse: [UInt8])?
        /// Whether the controller does LE extended advertising (from Read Advertising Features).
        var extendedAdvertising = false
        /// What the kernel granted our extended instance (TX power), once it did.
        var advertisingGrant: ExtendedAdvertisingGrant?
        var power = AdapterPower()
        /// We want LE privacy (a keyed rig) and the adapter has it: another program turning it
        /// off is undone (`restorePrivacy`).
        var privacy = false
        /// The kernel took our identity resolving key (`boundAddresses`).
        var keyTaken = false
        /// `restorePrivacy` is under way: no advertising until it is done (it would go out from
        /// the fixed address), and it resumes what a power-on meanwhile would have.
        var restoringPrivacy = false
        var discoveryWatchdog = DiscoveryWatchdog()
    }

    package let name: String
    private let index: UInt16
    private let psm: UInt8
    /// The rig's identity resolving key (most significant octet first), when it runs with LE
    /// privacy; nil for an open event's rig.
    private let identityResolvingKey: [UInt8]?
    private let logger: Logger
    /// How long a closing link may take to send what was sent on it last.
    private let sendGrace: Duration = .seconds(1)
    /// How long a stopping adapter waits for the kernel's answers to its clean-up. Linux holds
    /// its HCI work while it creates an LE connection (VM rig, 6.1 + Bumble: 4.0-4.2 s after
    /// each LE Create Connection, until its own Create Connection Cancel); a stop then, with a
    /// Start Discovery in flight, has its Stop Discovery refused (the start is pending) and must
    /// see the start answered to write it again. Closed sooner, it left the kernel discovering
    /// 10 s (two-rigs `btd-first`, 2026-12-03, read in `hci.log`).
    private let cleanUpGrace: Duration
    private let state = Mutex(State())
    private let mgmt: Mutex<MgmtSocket?> = Mutex(nil)
    /// Discovery is restarted this often to keep RSSI samples coming.
    static let discoveryCycle: Duration = .seconds(4)
    /// The kernel drops our advertisement this long after the last refresh.
    static let advertisingTimeoutSeconds: UInt16 = 8
    static let advertisingRefresh: Duration = .seconds(3)
    /// The interval range of our extended instance, in 0.625 ms units: 100-150 ms.
    static let advertisingIntervals: ClosedRange<UInt32> = 160...240

    package var backendName: String { name }
    package var boundAddresses: Bool { state.withLock { $0.privacy && $0.keyTaken } }

    /// `name` is the kernel's adapter name, "hci0"; `psm` is the peer channel's L2CAP PSM.
    /// `identityResolvingKey`: turn on LE privacy with this key at start (a rig of a keyed event,
    /// whose adverts must not be linkable through the adapter's fixed address, and whose peers
    /// resolve its addresses with the key they derive too).
    /// `cleanUpGrace`: see the property (tests that answer for the kernel give it more than a
    /// stalled test process could take).
    package init(
        name: String, psm: UInt8, identityResolvingKey: [UInt8]? = nil, logger: Logger, cleanUpGrace: Duration = .seconds(6)
    ) throws(BlueZError) {
        guard name.hasPrefix("hci"), let index = UInt16(name.dropFirst(3)) else {
            throw .noAdapter(requested: name, available: [])
        }
        self.name = name
        self.index = index
        self.psm = psm
        self.identityResolvingKey = identityResolvingKey
        self.logger = logger
        self.cleanUpGrace = cleanUpGrace
    }

    private func socket() throws(BlueZError) -> MgmtSocket {
        guard let socket = mgmt.withLock({ $0 }) else { throw .unsupported("the adapter is not started") }
        return socket
    }

    // MARK: Start

    /// Takes `socket` as the adapter's management channel and `events` as where its news go: the
    /// start's first step, and how a stand-in kernel's socket reaches the adapter in tests.
    func adopt(_ socket: MgmtSocket, events: @escaping @Sendable (BLEEvent) -> Void) {
        mgmt.withLock { $0 = socket }
        state.withLock { $0.handler = events }
        socket.onEvent { [weak self] index, event in self?.handle(event, index: index) }
    }

    package func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws {
        let socket = try MgmtSocket()
        adopt(socket, events: events)

        let indexes = try controllerIndexes(returnParameters: try await socket.send(.readControllerIndexList, index: MgmtPacket.noController))
        guard indexes.contains(index) else {
            throw BlueZError.noAdapter(requested: name, available: indexes.sorted().map { "hci\($0)" })
        }
        var info = try ControllerInfo(returnParameters: try await socket.send(.readControllerInfo, index: index))
        guard info.supportedSettings.contains(.lowEnergy) else {
            throw BlueZError.unsupported("\(name) does not support Bluetooth Low Energy")
        }
        if !info.currentSettings.contains(.lowEnergy) {
            _ = try await socket.send(.setLowEnergy(true), index: index)
        }
        if identityResolvingKey != nil { info.currentSettings = await enablePrivacy(socket, info) }
        if !info.currentSettings.contains(.powered) {
            logger.notice("powering on \(name)")
            guard let settings = await powerOn(socket, failing: "the rig cannot start on it") else { throw BlueZError.unsupported("\(name) could not be powered on") }
            info.currentSettings = settings
        }
        let features = try AdvertisingFeatures(returnParameters: try await socket.send(.readAdvertisingFeatures, index: index))
        let address = info.address
        let settings = info.currentSettings
        let extended = features.offersExtendedAdvertising
        let instance = features.freeInstance() ?? max(features.maxInstances, 1)
        if features.freeInstance() == nil {
            logger.warning(
                "every advertising instance of the adapter is in use; ours overwrites the highest",
                metadata: ["adapter": "\(name)", "instances": "\(features.instances)"])
        }
        state.withLock {
            $0.instance = instance
            $0.adapterAddress = address
            $0.power.commanded(powered: settings.contains(.powered))
            $0.privacy = identityResolvingKey != nil && settings.contains(.privacy)
            $0.extendedAdvertising = extended
        }
        try listen()
        logger.info(
            "Bluetooth adapter ready",
            metadata: [
                "adapter": "\(name)", "address": "\(BLEAddress(bytes: address))", "instance": "\(instance)",
                "advertising": "\(extended ? "extended" : "legacy")",
            ])
    }

    /// Turns on LE privacy with our identity resolving key, which the event's rigs derive too
    /// (they drop an advert of ours heard from an address it does not resolve). Set even when
    /// privacy is on already: the key in force then is someone else's, or a past run's. The
    /// kernel takes the setting only while the controller is off, so a powered adapter is
    /// powered off for it; `start` powers it on again. Returns the settings now in force.
    private func enablePrivacy(_ socket: MgmtSocket, _ info: ControllerInfo) async -> ControllerSettings {
        var settings = info.currentSettings
        guard info.supportedSettings.contains(.privacy) else {
            logger.warning(
                "the adapter does not support LE privacy: its address stays the same all run, so a scanner can follow the rig across advert rotations",
                metadata: ["adapter": "\(name)"])
            return settings
        }
        guard let identityResolvingKey else { return settings }
        do {
            if settings.contains(.powered) {
                logger.notice("powering \(name) off to turn on LE privacy")
                settings = ControllerSettings(rawValue: Self.settings(try await socket.send(.setPowered(false), index: index)))
            }
            state.withLock { $0.keyTaken = false }
            settings = ControllerSettings(
                rawValue: Self.settings(try await socket.send(.setPrivacy(mode: 1, identityResolvingKey: identityResolvingKey), index: index)))
            state.withLock { $0.keyTaken = settings.contains(.privacy) }
            logger.notice(
                "LE privacy on: resolvable private addresses, renewed by the kernel (every 15 minutes by default)",
                metadata: ["adapter": "\(name)"])
        } catch {
            logger.warning(
                "could not turn on LE privacy; the adapter keeps its fixed address", metadata: ["adapter": "\(name)", "error": "\(error)"])
        }
        return settings
    }

    /// Powers the adapter on and checks that it is; the settings in force afterwards, or nil
    /// when it stayed off. Set Powered is answered once the controller is initialised: seconds
    /// for a dual-mode controller on a loaded host (the VM rig), longer than other commands may
    /// take; an answer that comes too late makes the next try Busy, then powered. Right after a
    /// power-off the kernel may answer before it is up, so "not yet" is polled too. Every
    /// caller powered the adapter off itself, or found it off at start: leaving it off would
    /// leave the rig without Bluetooth for good, since no one else powers it on. `failing`
    /// says what follows when it stays off, in the one log line that reports it.
    private func powerOn(_ socket: MgmtSocket, failing consequence: String) async -> ControllerSettings? {
        for attempt in 1...Self.powerOnAttempts {
            do {
                _ = try await socket.send(.setPowered(true), index: index, timeout: Self.powerOnAnswer)
                for _ in 0..<25 {
                    let (settings, powered) = try await readPowered(socket)
                    if powered { return settings }
                    try await Task.sleep(for: .milliseconds(200))
                }
                logger.warning("adapter still off after Set Powered on", metadata: ["adapter": "\(name)", "attempt": "\(attempt)"])
            } catch {
                logger.warning("Set Powered on failed", metadata: ["adapter": "\(name)", "attempt": "\(attempt)", "error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
        logger.error(
            "could not power the adapter on; \(consequence)", metadata: ["adapter": "\(name)", "attempts": "\(Self.powerOnAttempts)"])
        return nil
    }

    /// Reads the controller's settings and adopts its powered state, unless a New Settings event
    /// overtook the read (`AdapterPower`); the settings read and the powered state in force.
    private func readPowered(_ socket: MgmtSocket) async throws -> (ControllerSettings, Bool) {
        let read = state.withLock { $0.power.readSent() }
        let info = try ControllerInfo(returnParameters: try await socket.send(.readControllerInfo, index: index))
        let powered = state.withLock { $0.power.answered(powered: info.currentSettings.contains(.powered), to: read) }
        return (info.currentSettings, powered)
    }

    static let powerOnAttempts = 5
    static let powerOnAnswer: Duration = .seconds(15)
    /// What follows a failed power-on after start: nothing else powers the adapter on.
    static let staysOff = "it stays off; advertising and discovery keep retrying"

    /// Turns LE privacy on again after another program turned it off. bluetoothd does so each
    /// time it starts (main.conf's `Privacy` defaults to off), and its own exit powers the
    /// adapter off, which is when the kernel takes the setting: after `systemctl restart
    /// bluetooth` (a bluez upgrade) the rig would advertise from the adapter's fixed address.
    /// A powered adapter is power-cycled for it, as at start; an adapter that is off stays off
    /// for whoever powers it on. Started by `handle`, which sets `restoringPrivacy`.
    private func restorePrivacy() async {
        logger.warning(
            "another program turned LE privacy off (bluetoothd does when it starts): turning it on again",
            metadata: ["adapter": "\(name)"])
        var poweredOff = false
        do {
            let socket = try socket()
            let info = try ControllerInfo(returnParameters: try await socket.send(.readControllerInfo, index: index))
            if info.currentSettings.contains(.powered) {
                poweredOff = true
                state.withLock { $0.power.commanded(powered: false) }
                emit(.adapterPowered(false))
            }
            _ = await enablePrivacy(socket, info)
            if poweredOff {
                _ = await powerOn(socket, failing: Self.staysOff)
            } else {
                // Someone (bluetoothd at its start) may have powered it on meanwhile.
                _ = try await readPowered(socket)
            }
        } catch {
            logger.error(
                "could not turn LE privacy on again; advertising and discovery keep retrying",
                metadata: ["adapter": "\(name)", "error": "\(error)"])
        }
        // One step with the flag: a power-on `handle` sees while the flag is up is left to us,
        // one after it is its own.
        let powered = state.withLock { s in
            s.restoringPrivacy = false
            return s.power.powered
        }
        guard powered else { return }
        if poweredOff { emit(.adapterPowered(true)) }
        await resumeAfterPowerOn()
    }

    private static func settings(_ parameters: [UInt8]) -> UInt32 {
        guard parameters.count >= 4 else { return 0 }
        return UInt32(parameters[0]) | UInt32(parameters[1]) << 8 | UInt32(parameters[2]) << 16 | UInt32(parameters[3]) << 24
    }

    // MARK: Advertising and discovery

    /// An Add Advertising the kernel answers Busy (another client's request in progress, e.g.
    /// bluetoothd's own advertising or discovery being set up) is not an error: the refresh every
    /// `advertisingRefresh` adds it again. Failing the start for it stopped a rig (CI, two-rigs
    /// `btd-first`, 2026-12-02).
    package func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {
        let first = state.withLock { s in
            defer { s.advertising = (Self.withoutFlags(data), scanResponse) }
            return s.advertising == nil
        }
        do {
            try await addAdvertising()
        } catch BlueZError.command(let command, .busy) {
            logger.warning(
                "the kernel answered Busy to our advertising; trying again every refresh",
                metadata: ["adapter": "\(name)", "command": "\(command)", "retry in": "\(Self.advertisingRefresh)"])
        }
        guard first else { return }
        Task { [weak self] in
            while let self, self.state.withLock({ $0.advertising != nil }) {
                try? await Task.sleep(for: Self.advertisingRefresh)
                do {
                    try await self.addAdvertising()
                } catch {
                    // A failure the adapter's stop caused is not worth a word.
                    guard self.state.withLock({ $0.advertising != nil }) else { return }
                    self.logger.warning("could not refresh advertising", metadata: ["adapter": "\(self.name)", "error": "\(error)"])
                }
            }
        }
    }

    /// Our instance was taken by another client: advertise from the highest one still free
    /// (the taker keeps its own), at once.
    private func moveAdvertising(from taken: UInt8) async {
        do {
            let features = try AdvertisingFeatures(returnParameters: try await socket().send(.readAdvertisingFeatures, index: index))
            guard let free = features.freeInstance() else {
                logger.warning("our advertising instance was taken and none is free: not advertising", metadata: ["adapter": "\(name)", "instance": "\(taken)"])
                return
            }
            state.withLock { $0.instance = free }
            logger.warning(
                "another client took our advertising instance; advertising from another",
                metadata: ["adapter": "\(name)", "taken": "\(taken)", "instance": "\(free)"])
            try await addAdvertising()
        } catch {
            logger.warning("could not move advertising to a free instance", metadata: ["adapter": "\(name)", "error": "\(error)"])
        }
    }

    /// (Re-)adds our instance, unless LE privacy is being restored; adding an existing instance
    /// replaces it and restarts its timeout.
    private func addAdvertising() async throws {
        guard
            let (instance, advertising, extended) = state.withLock({ s in
                s.restoringPrivacy ? nil : s.advertising.map { (s.instance, $0, s.extendedAdvertising) }
            })
        else { return }
        let socket = try socket()
        guard extended else {
            _ = try await socket.send(
                .addAdvertising(
                    instance: instance, flags: [.connectable, .discoverable], duration: 0, timeout: Self.advertisingTimeoutSeconds,
                    data: advertising.data, scanResponse: advertising.scanResponse),
                index: index)
            return
        }
        var flags: AdvertisingFlags = [.connectable, .discoverable, .parameterTimeout, .parameterIntervals]
        if !advertising.scanResponse.isEmpty { flags.insert(.parameterScanResponse) }
        let grant = try ExtendedAdvertisingGrant(
            returnParameters: try await socket.send(
                .addExtendedAdvertisingParameters(
                    instance: instance, flags: flags, duration: 0, timeout: Self.advertisingTimeoutSeconds,
                    minInterval: Self.advertisingIntervals.lowerBound, maxInterval: Self.advertisingIntervals.upperBound, txPower: 127),
                index: index))
        _ = try await socket.send(
            .addExtendedAdvertisingData(instance: instance, data: advertising.data, scanResponse: advertising.scanResponse), index: index)
        let first = state.withLock { s in
            defer { s.advertisingGrant = grant }
            return s.advertisingGrant == nil
        }
        if first {
            logger.info(
                "advertising with LE extended advertising commands, legacy PDUs",
                metadata: [
                    "adapter": "\(name)", "interval": "\(Double(Self.advertisingIntervals.lowerBound) * 0.625)-\(Double(Self.advertisingIntervals.upperBound) * 0.625) ms",
                    "txPower": "\(grant.txPower == 127 ? "not reported" : "\(grant.txPower) dBm")",
                ])
        }
    }

    /// Drops the Flags AD structure: with the discoverable flag the kernel writes its own.
    package static func withoutFlags(_ data: [UInt8]) -> [UInt8] {
        AdvertisingData(data).removing(AdvertisingData.flags).bytes
    }

    /// Starts discovery and keeps restarting it. A discovery that is already running (another
    /// program's, or one a killed predecessor left behind) is not an error: its Device Found
    /// events reach every management socket, and the restart cycle keeps trying.
    package func startScanning() async throws {
        state.withLock { $0.scanning = true }
        let (_, started, error) = await stopThenStartDiscovery(on: try socket())
        if let error {
            guard started == .busy else { throw error }
            logger.warning("discovery busy; retrying every cycle", metadata: ["adapter": "\(name)", "error": "\(error)"])
        }
        Task { [weak self] in
            while let self, self.state.withLock({ $0.scanning }) {
                try? await Task.sleep(for: Self.discoveryCycle)
                await self.restartDiscovery()
            }
        }
    }

    private func restartDiscovery() async {
        guard let socket = try? socket(), state.withLock({ $0.scanning }) else { return }
        let (stopped, started, error) = await stopThenStartDiscovery(on: socket)
        // The adapter stopping failed the restart: nothing to weigh or report.
        guard state.withLock({ $0.scanning }) else { return }
        switch state.withLock({ $0.discoveryWatchdog.restarted(stop: stopped, start: started) }) {
        case .fine:
            if let error { logger.warning("could not restart discovery", metadata: ["adapter": "\(name)", "error": "\(error)"]) }
        case .wedged:
            logger.warning(
                "discovery wedged in the kernel (Stop Discovery: \(stopped), Start Discovery: \(started)); the adapter is power-cycled if it stays so",
                metadata: ["adapter": "\(name)"])
        case .powerCycle:
            logger.error(
                "discovery stayed wedged in the kernel: power-cycling the adapter to reset it (links drop and are re-established)",
                metadata: ["adapter": "\(name)"])
            await powerCycle(socket)
        }
    }

    /// Powers the adapter off and on, checks that it is on (retrying for a few seconds), then
    /// brings advertising and discovery back itself: the kernel sends New Settings to every
    /// management socket except the one that asked, so `handle` never sees this power-on.
    private func powerCycle(_ socket: MgmtSocket) async {
        // The kernel refuses Set Powered (Busy) while another power change is under way; seen in
        // the two-rig VM right after the wedge. Powering on an adapter that never went off would
        // leave it wedged, so a refused power-off is tried again, or left to the next watchdog round.
        var poweredOff = false
        for attempt in 1...3 where !poweredOff {
            do {
                _ = try await socket.send(.setPowered(false), index: index)
                poweredOff = true
            } catch {
                logger.warning("Set Powered off failed", metadata: ["adapter": "\(name)", "attempt": "\(attempt)", "error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        guard poweredOff else {
            logger.error("could not power the adapter off; the discovery watchdog tries again", metadata: ["adapter": "\(name)"])
            return
        }
        state.withLock { $0.power.commanded(powered: false) }
        emit(.adapterPowered(false))
        guard await powerOn(socket, failing: Self.staysOff) != nil else { return }
        logger.notice("adapter powered on again after the power cycle", metadata: ["adapter": "\(name)"])
        emit(.adapterPowered(true))
        await resumeAfterPowerOn()
    }

    /// Power-off removed our advertising instance (and a controller reset leaves it with empty
    /// data), and discovery ended: bring both back now rather than at the next refresh, so
    /// that peers do not time us out.
    private func resumeAfterPowerOn() async {
        do {
            try await addAdvertising()
        } catch {
            logger.warning("could not re-add advertising", metadata: ["adapter": "\(name)", "error": "\(error)"])
        }
        await restartDiscovery()
    }

    /// Stops our LE discovery (if any) and starts it again; the statuses of both and the error
    /// of the start, if it failed.
    private func stopThenStartDiscovery(on socket: MgmtSocket) async -> (stopped: MgmtStatus, started: MgmtStatus, error: (any Error)?) {
        let (stopped, _) = await Self.status { try await socket.send(.stopDiscovery(addressTypes: 0x06), index: index) }
        let start = { await Self.status { try await socket.send(.startDiscovery(addressTypes: 0x06), index: self.index) } }
        var (started, error) = await start()
        if DiscoveryWatchdog.startsAgain(stop: stopped, start: started) {
            try? await Task.sleep(for: DiscoveryWatchdog.startAgainAfter)
            (started, error) = await start()
        }
        return (stopped, started, error)
    }

    /// The management status a command ended with, and the error when it failed; failures that
    /// carry no status (no answer, a socket error) count as `failed`.
    private static func status(of command: () async throws -> [UInt8]) async -> (MgmtStatus, (any Error)?) {
        do {
            _ = try await command()
            return (.success, nil)
        } catch {
            if case BlueZError.command(_, let status) = error { return (status, error) }
            return (.failed, error)
        }
    }

    private func handle(_ event: MgmtEvent, index: UInt16) {
        guard index == self.index else { return }
        switch event {
        case .deviceFound(let found), .advertisementMonitorDeviceFound(_, let found):
            guard found.addressType != .bredr else { return }
            let address = BLEAddress(bytes: found.address)
            let handler = state.withLock { s in
                s.addressTypes[address] = found.addressType
                return s.handler
            }
            handler?(.advertisement(address, rssi: Int(found.rssi), data: found.eir))
        case .newSettings(let settings):
            let powered = settings.contains(.powered)
            let (wasPowered, restoring, privacyLost) = state.withLock { s in
                let lost = s.privacy && !settings.contains(.privacy) && !s.restoringPrivacy
                if lost { s.restoringPrivacy = true }
                return (s.power.settingsChanged(powered: powered), s.restoringPrivacy, lost)
            }
            if wasPowered, !powered {
                logger.warning("Bluetooth adapter powered off", metadata: ["adapter": "\(name)"])
                emit(.adapterPowered(false))
            } else if powered, !wasPowered {
                emit(.adapterPowered(true))
                logger.notice("Bluetooth adapter powered on again: advertising and discovery restart", metadata: ["adapter": "\(name)"])
            }
            // Advertising from the fixed address must not resume before privacy is back on.
            if privacyLost {
                Task { [weak self] in await self?.restorePrivacy() }
            } else if powered, !wasPowered, !restoring {
                Task { [weak self] in await self?.resumeAfterPowerOn() }
            }
        case .advertisingAdded(let instance) where instance == state.withLock({ $0.instance }):
            // Another mgmt client (bluetoothd with one advertisement too many) added an instance
            // with our number: the kernel replaced our advert with its. Move to a free instance.
            Task { [weak self] in await self?.moveAdvertising(from: instance) }
        case .indexRemoved:
            logger.error("Bluetooth adapter removed", metadata: ["adapter": "\(name)"])
        default:
            break
        }
    }

    // MARK: Links

    private func listen() throws(BlueZError) {
        let address = state.withLock { $0.adapterAddress }
        let fd = try L2CAPSocket.make(adapter: address, psm: psm)
        guard Glibc.listen(fd, 8) == 0 else {
            let code = errno
            close(fd)
            throw .socket(call: "listen(L2CAP psm \(psm))", errno: code)
        }
        let listener = LinkSocket(FileDescriptor(rawValue: fd))
        state.withLock { $0.listener = listener }
        let logger = self.logger
        IOThread.detach(name: "l2cap-accept") { [weak self] in
            AcceptLoop.run(
                next: { () -> AcceptOutcome<(Int32, BLEAddress)> in
                    guard self != nil, !listener.wasShutDown else { return .stopped }
                    switch L2CAPSocket.accept(listener.ownerDescriptor.rawValue) {
                    case .success(let accepted): return .accepted(accepted)
                    case .failure(let error): return listener.wasShutDown ? .stopped : .failed(error)
                    }
                },
                report: { error, inARow, pausing in
                    // The 1st, 10th, 100th, … in a row: a flood must not flood the log too.
                    var power = inARow
                    while power % 10 == 0 { power /= 10 }
                    guard power == 1 else { return }
                    logger.warning(
                        "accepting an L2CAP connection failed; accepting goes on",
                        metadata: ["error": "\(error)", "in a row": "\(inARow)", "pausing": "\(pausing)"])
                },
                accepted: { (accepted: (fd: Int32, peer: BLEAddress)) in
                    let (fd, peer) = accepted
                    let socket = LinkSocket(FileDescriptor(rawValue: fd))
                    guard let self else { return socket.close() }
                    let link = self.register(socket)
                    self.emit(.linkOpened(link, peer: peer, initiatedLocally: false))
                    self.readLoop(link: link, socket: socket)
                })
            listener.close()
        }
    }

    private func register(_ socket: LinkSocket) -> LinkID {
        state.withLock { s in
            let link = s.nextLink
            s.nextLink &+= 1
            s.links[link] = socket
            return link
        }
    }

    private func emit(_ event: BLEEvent) {
        state.withLock { $0.handler }?(event)
    }

    /// One reader thread per link, the socket's owner: each read is one SDU; EOF, an error or a
    /// shutdown ends the link, which leaves the table before its socket is closed.
    private func readLoop(link: LinkID, socket: LinkSocket) {
        socket.readOnNewThread(
            data: { [weak self] sdu in self?.emit(.linkData(link, sdu)) },
            ended: { [weak self] in
                guard let self else { return }
                let local = self.state.withLock { s in
                    s.links[link] = nil
                    return s.closedLocally.remove(link) != nil
                }
                if !local { self.emit(.linkClosed(link)) }
            })
    }

    package func connect(to peer: BLEAddress) throws -> LinkID {
        let (address, type) = state.withLock { ($0.adapterAddress, $0.addressTypes[peer] ?? .lePublic) }
        let socket = LinkSocket(FileDescriptor(rawValue: try L2CAPSocket.make(adapter: address, psm: 0)), connecting: true)
        let link = register(socket)
        let psm = self.psm
        // This thread owns the socket until it hands it to the reader; `disconnect` meanwhile
        // asks it to give up, and it closes the socket itself.
        IOThread.detach(name: "l2cap-connect") { [weak self] in
            let outcome = socket.connect { L2CAPSocket.connect($0, to: peer, type: type, psm: psm) }
            if outcome == .connected, let self {
                self.emit(.linkOpened(link, peer: peer, initiatedLocally: true))
                self.readLoop(link: link, socket: socket)
                return
            }
            if case .failed(let errno) = outcome {
                self?.logger.info(
                    "L2CAP connect failed",
                    metadata: ["peer": "\(peer)", "error": "\(BlueZError.socket(call: "connect(L2CAP \(peer))", errno: errno))"])
                // The peer's kernel answered the channel request with a refusal: nobody listens
                // on the PSM there.
                if errno == ECONNREFUSED { self?.emit(.connectRefused(link)) }
            }
            self?.state.withLock { s in
                s.links[link] = nil
                s.closedLocally.remove(link)
            }
            // Reported before the close, as the reader does: on Debian's 6.1.192 kernel closing a
            // socket whose connect the kernel failed can hit a kernel BUG that kills this thread
            // in close(2) (Tests/VMRig/README.md, "Kernel bug seen"); the link is gone by then.
            self?.emit(.linkClosed(link))
            socket.close()
        }
        return link
    }

    package func send(_ sdu: [UInt8], on link: LinkID) throws {
        guard let socket = state.withLock({ $0.links[link] }) else { throw BLEAdapterError.unknownLink(link) }
        // Never block the node on one peer: a channel out of credits (a stalled or dying peer)
        // fails this send, and the peer protocol repeats unanswered messages.
        try socket.send(sdu, link: link)
    }

    package func disconnect(_ link: LinkID) {
        let socket = state.withLock { s -> LinkSocket? in
            guard let socket = s.links[link] else { return nil }
            s.closedLocally.insert(link)
            return socket
        }
        socket?.shutdownWhenSent(within: sendGrace)
    }

    package func stop() async {
        let (instance, listener, links) = state.withLock { s in
            s.scanning = false
            s.advertising = nil
            s.closedLocally.formUnion(s.links.keys)
            return (s.instance, s.listener, Array(s.links.values))
        }
        // What was sent last (the goodbyes) may leave until `sendGrace`; the clean-up (written
        // at once, `MgmtSocket.finish`) is answered within `cleanUpGrace`. Then the owners (the
        // reader threads, the accept thread) close the sockets once woken.
        let deadline = ContinuousClock.now + sendGrace
        async let drained: Void = withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            IOThread.detach(name: "l2cap-drain") {
                for socket in links { socket.waitUntilSent(deadline: deadline) }
                done.resume()
            }
        }
        let cleanUp: [MgmtCommand] = [.removeAdvertising(instance: instance), .stopDiscovery(addressTypes: 0x06)]
        if let socket = try? socket(), !(await socket.finish(with: cleanUp, index: index, deadline: .now + cleanUpGrace)) {
            logger.warning(
                "the kernel did not answer the adapter's clean-up (Remove Advertising, Stop Discovery) before the stop's deadline: a discovery it had started may run on for up to 10 s, and other programs' Start Discovery answer Busy meanwhile",
                metadata: ["adapter": "\(name)"])
        }
        await drained
        for socket in links { socket.shutdown() }
        listener?.shutdown()
    }
}

extension BlueZAdapter {
    /// Reads an adapter's state without changing anything (allowed without CAP_NET_ADMIN).
    package static func readInfo(_ name: String) async throws(BlueZError) -> ControllerInfo {
        guard name.hasPrefix("hci"), let index = UInt16(name.dropFirst(3)) else { throw .noAdapter(requested: name, available: []) }
        let socket = try MgmtSocket()
        defer { socket.close() }
        let reply = try await socket.send(.readControllerInfo, index: index)
        do {
            return try ControllerInfo(returnParameters: reply)
        } catch {
            throw .malformedReply(.readControllerInfo, error)
        }
    }
}
