import CoreMetrics
import Logging
import StreamIO
import Synchronization
import UCI

package enum UCIHostError: Error, Equatable, Sendable, CustomStringConvertible {
    case timeout(command: String)
    case commandFailed(command: String, status: StatusCode)
    case configRejected([AppConfigStatus])
    /// A multicast list update refused this controlee (a `MulticastUpdateStatus`).
    case multicastListRefused(address: UInt16, status: UInt8)
    case malformedResponse(command: String, UCIError)
    case unexpectedResponse(command: String, got: String)
    /// The UWBS answered the command with CORE_GENERIC_ERROR_NTF STATUS_COMMAND_RETRY (it
    /// received the command damaged) each time it was sent.
    case retryRequested(command: String)
    /// The transport failed; the error it threw, whole.
    case transport(TransportFailure)
    case closed

    package var description: String {
        switch self {
        case .timeout(let command): "UWBS did not answer \(command) in time"
        case .commandFailed(let command, let status): "UWBS rejected \(command): \(status)"
        case .configRejected(let statuses):
            "UWBS rejected app config " + statuses.map { "\($0.id)=\($0.status)" }.joined(separator: ", ")
        case .multicastListRefused(let address, let status):
            "UWBS refused controlee \(String(address, radix: 16)) in the multicast list (status \(status))"
        case .malformedResponse(let command, let error): "malformed response to \(command): \(error)"
        case .unexpectedResponse(let command, let got): "expected a response to \(command), got \(got)"
        case .retryRequested(let command): "UWBS asked for \(command) again each time it was sent"
        case .transport(let failure): "UWB transport failed: \(failure)"
        case .closed: "the UWB device is gone"
        }
    }

    /// The error the transport threw, if the transport failed.
    package var underlying: (any Error)? {
        if case .transport(let failure) = self { return failure.error }
        return nil
    }
}

/// Drives one UWBS over any `UCITransport`: one outstanding command at a time (FiRa UCI flow
/// control), response timeouts with bounded resending, session-state tracking, and notifications handed to `events`
/// in the order the device sent them: everything decoded from one transport read in one call,
/// so a busy board costs its consumer one hand-off per read rather than one per notification.
///
/// The reading side (decoder, the command awaiting its response, what the board reported) is
/// behind one lock rather than the actor, so a transport that reads on its own thread hands each
/// read straight to the decoder there (`UCITransport.deliverReads`): on a node's `EventLoop`,
/// bytes go from `read(2)` to the node's inbox with no task hop.
package actor UCIHost {
    private typealias Reply = ReplySlot<UCIResponse, UCIHostError>

    private struct Pending {
        var id: UInt64
        var command: UCICommand
        var reply: Reply
        /// Set once the command is written: the attempt times out then.
        var deadline: Duration?
    }

    /// `updateMulticastList` waiting for the session's notification.
    private struct MulticastWaiter {
        var session: UInt32
        var reply: ReplySlot<MulticastListUpdate?, Never>
        var deadline: Duration
    }

    /// What the reading side owns.
    private struct Link {
        /// Bumped by `attach`, so a reader of a replaced transport cannot touch the new one.
        var generation = 0
        var decoder = UCIStreamDecoder()
        var pending: Pending?
        var failure: UCIHostError?
        var deviceState: DeviceState?
        var sessionStates: [UInt32: SessionState] = [:]
        /// The last SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_NTF per session, for a list update
        /// whose response had no per-controlee statuses (UCI 1.x) to read the outcome from.
        var multicastUpdates: [UInt32: MulticastListUpdate] = [:]
        var multicastWaiter: MulticastWaiter?
        /// The incomplete packet being watched (its stream offset) and when it is given up.
        var stall: (offset: Int, deadline: Duration)?
        /// The storage of a read's notifications once `events` had them, emptied: the next read's
        /// go into it, so a read costs no allocation for its list.
        var spareEvents: [UCIHostEvent] = []

        /// Starts watching an incomplete packet no watch runs for yet; its deadline if so.
        mutating func watchStall(now: () -> Duration) -> Duration? {
            guard decoder.pendingByteCount > 0 else {
                stall = nil
                return nil
            }
            guard stall?.offset != decoder.streamOffset else { return nil }
            stall = (decoder.streamOffset, now() + UCIHost.packetAssemblyLimit)
            return stall?.deadline
        }

        /// The earliest of the deadlines this holds.
        var nextDeadline: Duration? {
            [pending?.deadline, multicastWaiter?.deadline, stall?.deadline].compactMap { $0 }.min()
        }

        /// Everyone waiting fails with `error`; used when the link is dropped.
        mutating func failWaiters(_ error: UCIHostError, into outcome: inout Outcome) {
            if let current = pending {
                pending = nil
                outcome.replies.append((current.reply, .failure(error)))
            }
            if let waiter = multicastWaiter {
                multicastWaiter = nil
                outcome.multicast.append((waiter.reply, nil))
            }
        }
    }

    /// What one read led to, acted on once the lock is released.
    private struct Outcome {
        var replies: [(Reply, Result<UCIResponse, UCIHostError>)] = []
        var multicast: [(ReplySlot<MulticastListUpdate?, Never>, MulticastListUpdate?)] = []
        var events: [UCIHostEvent] = []
        var logs: [(Logger.Level, Logger.Message, Logger.Metadata)] = []
    }

    private var transport: any UCITransport
    private let link = Mutex(Link())
    private let commandTimeout: Duration
    private let commandAttempts: Int
    /// Commands that went unanswered however often they were sent: a session manager asks
    /// whether the board is still there when this grows (never reset, unlike `link`).
    private let unanswered = Atomic<Int>(0)
    /// Every deadline of the host (the command's, a multicast notification's, a stalled packet's)
    /// on the host's clock.
    private let timer: DeadlineTimer
    private let logger: Logger
    private let events: @Sendable ([UCIHostEvent]) -> Void
    /// Where a reader task runs, for transports that cannot deliver their reads: a node's event
    /// loop, so that reading, decoding and the node's own handling share one thread; nil for the
    /// global pool.
    private let executor: (any TaskExecutor)?

    /// Whether a command is in flight (UCI allows one); senders queue for it in order.
    private let commandSlot = WaiterList(false) { inFlight in !inFlight }
    private var nextCommandID: UInt64 = 0
    private var started = false

    /// Last CORE_DEVICE_STATUS_NTF state.
    package nonisolated var deviceState: DeviceState? { link.withLock { $0.deviceState } }
    /// Sessions the UWBS reported, by session token (UCI 2.0 handle or 1.x id).
    package nonisolated var sessionStates: [UInt32: SessionState] { link.withLock { $0.sessionStates } }
    /// How many commands have failed for want of an answer, after every attempt.
    package nonisolated var unansweredCommands: Int { unanswered.load(ordering: .relaxed) }

    /// - Parameters:
    ///   - commandTimeout: how long one attempt waits for the response.
    ///   - commandAttempts: how often a command is sent before a timeout is final. Like the
    ///     UCI stacks on phones (AOSP's uwb_core), a command whose answer was lost or that the
    ///     UWBS asked for again (STATUS_COMMAND_RETRY) is sent again, the same bytes; a late
    ///     answer to an earlier attempt answers it, and the ones after it are dropped as strays.
    package init(
        transport: any UCITransport, commandTimeout: Duration = .seconds(2), commandAttempts: Int = 3,
        clock: any Clock<Duration> = ContinuousClock(), logger: Logger, executor: (any TaskExecutor)? = nil,
        events: @escaping @Sendable ([UCIHostEvent]) -> Void
    ) {
        self.executor = executor
        self.transport = transport
        self.commandTimeout = commandTimeout
        self.commandAttempts = max(1, commandAttempts)
        timer = DeadlineTimer(clock: clock, executor: executor)
        self.logger = logger
        self.events = events
    }

    /// Starts reading from the device. Call once, before the first command.
    package func start() {
        guard !started else { return }
        started = true
        startReading(transport, generation: link.withLock { $0.generation })
    }

    /// Continues on a new transport after the old one ended (the board was replugged, or the
    /// connection re-established). The UWBS is a fresh device: no sessions, state unknown.
    package func attach(_ transport: any UCITransport) {
        self.transport.close()
        self.transport = transport
        var outcome = Outcome()
        let generation = link.withLock { l in
            l.failWaiters(.closed, into: &outcome)
            l = Link(generation: l.generation + 1)
            return l.generation
        }
        act(on: outcome)
        startReading(transport, generation: generation)
    }

    private func startReading(_ transport: any UCITransport, generation: Int) {
        let delivered = transport.deliverReads { [self] result in
            switch result {
            case .success(let bytes?): receive(bytes, generation: generation)
            case .success(nil): end(.closed, generation: generation)
            case .failure(let error): end(.transport(TransportFailure(error)), generation: generation)
            }
        }
        guard !delivered else { return }
        Task(executorPreference: executor) { await self.readLoop(transport, generation: generation) }
    }

    /// Description of the current transport, e.g. `tcp:127.0.0.1:7000` or `usb:1-1.2`.
    package var transportDescription: String { transport.description }

    /// Closes the transport; pending and later commands fail with `.closed`.
    package func shutdown() {
        transport.close()
    }

    // MARK: Commands

    /// Sends `command` and waits for its response (queued behind any command in flight), sending
    /// it again while it goes unanswered, up to `commandAttempts` times.
    package func send(_ command: UCICommand) async throws(UCIHostError) -> UCIResponse {
        await commandSlot.wait { $0 = true }
        defer { commandSlot.update { $0 = false } }
        var attempt = 1
        while true {
            let started = ContinuousClock.now
            let result = await exchange(command)
            Self.measure(command, result, took: ContinuousClock.now - started)
            switch result {
            case .failure(.timeout), .failure(.retryRequested):
                guard attempt < commandAttempts else {
                    unanswered.add(1, ordering: .relaxed)
                    logger.warning("UCI command went unanswered", metadata: ["command": "\(Self.name(command))", "attempts": "\(attempt)"])
                    return try result.get()
                }
                attempt += 1
                logger.warning("UCI command not answered; sending it again", metadata: ["command": "\(Self.name(command))", "attempt": "\(attempt)"])
            default:
                return try result.get()
            }
        }
    }

    /// How long each attempt took and which failed, for whatever metrics backend the process
    /// set up (none: the calls do nothing): `nearby_uci_command_duration_seconds{command}` and
    /// `nearby_uci_command_errors_total{command,error}`.
    private static func measure(_ command: UCICommand, _ result: Result<UCIResponse, UCIHostError>, took duration: Duration) {
        let name = Self.name(command)
        let (seconds, attoseconds) = duration.components
        CoreMetrics.Timer(label: "nearby_uci_command_duration_seconds", dimensions: [("command", name)])
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let error: String? = switch result {
        case .success(let response) where response.status != .ok: "\(response.status)"
        case .success: nil
        case .failure(.timeout): "timeout"
        case .failure(.retryRequested): "retry_requested"
        case .failure(.transport), .failure(.closed): "transport"
        case .failure: "malformed"
        }
        if let error { CoreMetrics.Counter(label: "nearby_uci_command_errors_total", dimensions: [("command", name), ("error", error)]).increment() }
    }

    /// One attempt: writes `command` and waits for its response or its timeout.
    private func exchange(_ command: UCICommand) async -> Result<UCIResponse, UCIHostError> {
        nextCommandID += 1
        let id = nextCommandID
        // Registered before writing: the actor is free during the write, and a fast device's
        // response may be read before the write call returns.
        let reply = Reply()
        let failure = link.withLock { l -> UCIHostError? in
            if l.failure == nil { l.pending = Pending(id: id, command: command, reply: reply) }
            return l.failure
        }
        if let failure { return .failure(failure) }
        do {
            try await transport.write(command.message.encoded())
        } catch {
            link.withLock { l in if l.pending?.id == id { l.pending = nil } }
            return .failure(.transport(TransportFailure(error)))
        }
        let deadline = timer.now() + commandTimeout
        let waiting = link.withLock { l in
            guard l.pending?.id == id else { return false }  // answered already
            l.pending?.deadline = deadline
            return true
        }
        if waiting { timer.wake(at: deadline, expireDue) }
        return await reply.result
    }

    /// DEVICE_RESET; the UWBS then reports READY through a device status notification.
    package func reset() async throws(UCIHostError) {
        link.withLock { $0.sessionStates = [:] }
        try check(await send(.deviceReset), "CORE_DEVICE_RESET")
    }

    package func deviceInfo() async throws(UCIHostError) -> DeviceInfo {
        let response = try await send(.getDeviceInfo)
        guard case .deviceInfo(.ok, let info) = response else {
            try check(response, "CORE_GET_DEVICE_INFO")
            throw .unexpectedResponse(command: "CORE_GET_DEVICE_INFO", got: "\(response)")
        }
        return info
    }

    package func capabilities() async throws(UCIHostError) -> [CapabilityTLV] {
        let response = try await send(.getCapsInfo)
        guard case .capsInfo(.ok, let tlvs) = response else {
            try check(response, "CORE_GET_CAPS_INFO")
            throw .unexpectedResponse(command: "CORE_GET_CAPS_INFO", got: "\(response)")
        }
        return tlvs
    }

    /// SESSION_INIT; returns the token for later commands: the UCI 2.0 session handle, or the
    /// session id itself on a UCI 1.x device.
    package func initSession(id: UInt32, type: SessionType = .fiRaRanging) async throws(UCIHostError) -> UInt32 {
        let response = try await send(.sessionInit(sessionID: id, type: type))
        guard case .sessionInit(.ok, let handle) = response else {
            try check(response, "SESSION_INIT")
            throw .unexpectedResponse(command: "SESSION_INIT", got: "\(response)")
        }
        return handle ?? id
    }

    package func setAppConfig(session: UInt32, _ tlvs: [AppConfigTLV]) async throws(UCIHostError) {
        let response = try await send(.setAppConfig(session: session, tlvs))
        if case .setAppConfig(let status, let statuses) = response, status != .ok {
            throw statuses.isEmpty ? .commandFailed(command: "SESSION_SET_APP_CONFIG", status: status) : .configRejected(statuses)
        }
        try check(response, "SESSION_SET_APP_CONFIG")
    }

    /// Adds controlees to, or removes them from, a one-to-many session (MULTI_NODE_MODE 1). Fails
    /// unless the UWBS took every one of them: a UCI 2.0 response lists the refused ones; a UCI
    /// 1.x response is a status alone, and the outcome per controlee comes in the notification
    /// that follows, which this then waits for (one command timeout at most; without one, the
    /// update counts as done).
    package func updateMulticastList(session: UInt32, _ action: MulticastAction, _ controlees: [Controlee]) async throws(UCIHostError) {
        let name = "SESSION_UPDATE_CONTROLLER_MULTICAST_LIST"
        link.withLock { _ = $0.multicastUpdates.removeValue(forKey: session) }
        let response = try await send(.updateControllerMulticastList(session: session, action: action, controlees))
        try check(response, name)
        guard case .updateControllerMulticastList(_, var statuses) = response else {
            throw .unexpectedResponse(command: name, got: "\(response)")
        }
        if statuses.isEmpty, let update = await multicastNotification(for: session) {
            let wanted = Set(controlees.map(\.shortAddress))
            statuses = update.controlees.filter { wanted.contains($0.shortAddress) }
        }
        if let refused = statuses.first(where: { $0.status != MulticastUpdateStatus.ok }) {
            throw .multicastListRefused(address: refused.shortAddress, status: refused.status)
        }
    }

    /// The session's multicast-list notification once it has come (it normally follows the
    /// response at once); nil if none came within one command timeout, or the transport ended.
    private func multicastNotification(for session: UInt32) async -> MulticastListUpdate? {
        let reply = ReplySlot<MulticastListUpdate?, Never>()
        let deadline = timer.now() + commandTimeout
        let ready = link.withLock { l -> MulticastListUpdate?? in
            if let update = l.multicastUpdates.removeValue(forKey: session) { return .some(update) }
            guard l.failure == nil else { return .some(nil) }
            l.multicastWaiter = MulticastWaiter(session: session, reply: reply, deadline: deadline)
            return .none
        }
        if let ready { return ready }
        timer.wake(at: deadline, expireDue)
        return await reply.result.get()
    }

    package func startRanging(session: UInt32) async throws(UCIHostError) {
        try check(await send(.sessionStart(session: session)), "SESSION_START")
    }

    package func stopRanging(session: UInt32) async throws(UCIHostError) {
        try check(await send(.sessionStop(session: session)), "SESSION_STOP")
    }

    /// ANDROID_SET_COUNTRY_CODE: the region whose rules the UWBS must keep (channels, power).
    package func setCountryCode(_ code: String) async throws(UCIHostError) {
        try check(await send(.androidSetCountryCode(code)), "ANDROID_SET_COUNTRY_CODE")
    }

    package func deinitSession(_ session: UInt32) async throws(UCIHostError) {
        try check(await send(.sessionDeinit(session: session)), "SESSION_DEINIT")
        _ = link.withLock { $0.sessionStates.removeValue(forKey: session) }
    }

    private func check(_ response: UCIResponse, _ name: String) throws(UCIHostError) {
        guard response.status == .ok else { throw .commandFailed(command: name, status: response.status) }
    }

    // MARK: Deadlines

    /// What the timer calls: fails what is due at `now` (the command attempt, a multicast
    /// notification's wait), gives up a stalled packet, and says when to come back.
    private nonisolated var expireDue: DeadlineTimer.Fire {
        { [weak self] now in self?.expire(at: now) }
    }

    private nonisolated func expire(at now: Duration) -> Duration? {
        var outcome = Outcome()
        let next = link.withLock { l -> Duration? in
            if let current = l.pending, let deadline = current.deadline, deadline <= now {
                l.pending = nil
                outcome.replies.append((current.reply, .failure(.timeout(command: Self.name(current.command)))))
            }
            if let waiter = l.multicastWaiter, waiter.deadline <= now {
                l.multicastWaiter = nil
                outcome.multicast.append((waiter.reply, nil))
            }
            if let stall = l.stall, stall.deadline <= now {
                l.stall = nil
                // Its packet was completed or dropped meanwhile: nothing to give up.
                if l.decoder.streamOffset == stall.offset, l.decoder.pendingByteCount > 0 {
                    // A header most likely corrupted (a length too large): drop the packet and
                    // look for the next one.
                    outcome.logs.append(
                        (.warning, "UCI packet incomplete, resynchronising", ["waited": "\(Self.packetAssemblyLimit)", "bytes": "\(l.decoder.pendingByteCount)"]))
                    l.decoder.skipStalledPacket()
                    Self.drain(&l, into: &outcome)
                }
                _ = l.watchStall { now }
            }
            return l.nextDeadline
        }
        act(on: outcome)
        return next
    }

    // MARK: Reading

    /// For transports that cannot deliver their reads: reads until the stream ends.
    private nonisolated func readLoop(_ transport: any UCITransport, generation: Int) async {
        while true {
            do {
                guard let chunk = try await transport.read() else { return end(.closed, generation: generation) }
                guard chunk.withUnsafeBytes({ receive($0, generation: generation) }) else { return }
            } catch {
                return end(.transport(TransportFailure(error)), generation: generation)
            }
        }
    }

    /// Decodes a read's bytes: responses complete the pending command, notifications go to
    /// `events` as one batch. False once the transport was replaced.
    @discardableResult
    private nonisolated func receive(_ chunk: UnsafeRawBufferPointer, generation: Int) -> Bool {
        var outcome = Outcome()
        let (current, stallDeadline) = link.withLock { l -> (Bool, Duration?) in
            guard l.generation == generation else { return (false, nil) }
            swap(&outcome.events, &l.spareEvents)
            l.decoder.append(chunk)
            Self.drain(&l, into: &outcome)
            // Whole packets leave nothing behind; a part waits for its rest, but not for ever.
            return (true, l.watchStall(now: timer.now))
        }
        act(on: outcome)
        if let stallDeadline { timer.wake(at: stallDeadline, expireDue) }
        guard current else { return false }
        // `events` kept none of them: the storage is this read's alone again.
        outcome.events.removeAll(keepingCapacity: true)
        link.withLock { l in if l.generation == generation { swap(&outcome.events, &l.spareEvents) } }
        return true
    }

    /// How long the rest of a packet may take once its first bytes came: a 255-byte packet
    /// takes 22 ms at 115 200 baud, far less over USB or TCP. After that, the packet is dropped.
    static let packetAssemblyLimit = Duration.milliseconds(250)

    /// The transport ended: the pending command and every later one fail with `error`.
    private nonisolated func end(_ error: UCIHostError, generation: Int) {
        var outcome = Outcome()
        link.withLock { l in
            guard l.generation == generation, l.failure == nil else { return }
            l.failure = error
            l.failWaiters(error, into: &outcome)
            outcome.events.append(.closed(error))
        }
        act(on: outcome)
    }

    private nonisolated func act(on outcome: Outcome) {
        for (level, message, metadata) in outcome.logs { logger.log(level: level, message, metadata: metadata) }
        for (reply, result) in outcome.replies { reply.resume(with: result) }
        for (reply, update) in outcome.multicast { reply.resume(with: .success(update)) }
        if !outcome.events.isEmpty { events(outcome.events) }
    }

    /// Handles every complete message in the decoder.
    private static func drain(_ link: inout Link, into outcome: inout Outcome) {
        while true {
            do {
                guard let message = try link.decoder.next() else { return }
                handle(message, &link, into: &outcome)
                link.decoder.recycle(message)
            } catch {
                // Garbage or a broken segment: the decoder has dropped it and resynchronised.
                outcome.logs.append((.warning, "UCI stream error", ["error": "\(error)"]))
            }
        }
    }

    /// Completes the pending command with a response; a notification is tracked and reported.
    private static func handle(_ message: UCIMessage, _ link: inout Link, into outcome: inout Outcome) {
        switch message.messageType {
        case .response:
            guard let current = link.pending else {
                outcome.logs.append((.warning, "unsolicited UCI response", ["gid": "\(message.groupID)", "oid": "\(message.opcodeID)"]))
                return
            }
            let expected = current.command.message
            let name = Self.name(current.command)
            // A response to another command is a duplicate or a late one (its command timed
            // out): taking it as this command's answer would put every later one out of step.
            guard expected.groupID == message.groupID, expected.opcodeID == message.opcodeID else {
                outcome.logs.append(
                    (.warning, "stray UCI response", ["gid": "\(message.groupID)", "oid": "\(message.opcodeID)", "waiting": "\(name)"]))
                return
            }
            link.pending = nil
            do {
                outcome.replies.append((current.reply, .success(try UCIResponse(message))))
            } catch {
                outcome.replies.append((current.reply, .failure(.malformedResponse(command: name, error))))
            }
        case .notification:
            do {
                let notification = try UCINotification(message)
                track(notification, &link)
                if case .multicastListUpdate(let update) = notification, let waiter = link.multicastWaiter, waiter.session == update.session {
                    link.multicastWaiter = nil
                    link.multicastUpdates[update.session] = nil
                    outcome.multicast.append((waiter.reply, update))
                }
                // The UWBS received the command damaged and asks for it again.
                if case .genericError(.commandRetry) = notification, let current = link.pending {
                    link.pending = nil
                    outcome.replies.append((current.reply, .failure(.retryRequested(command: Self.name(current.command)))))
                }
                outcome.events.append(.notification(notification))
            } catch {
                outcome.logs.append((.warning, "undecodable UCI notification", ["error": "\(error)"]))
            }
        case .data, .command:
            outcome.logs.append((.debug, "ignoring UCI message", ["type": "\(message.messageType)"]))
        }
    }

    private static func track(_ notification: UCINotification, _ link: inout Link) {
        switch notification {
        case .deviceStatus(let state):
            link.deviceState = state
        case .sessionStatus(let session, .deinitialized, _):
            link.sessionStates[session] = nil
        case .sessionStatus(let session, let state, _):
            link.sessionStates[session] = state
        case .multicastListUpdate(let update):
            link.multicastUpdates[update.session] = update
        case .genericError, .rangeData:
            break
        }
    }

    /// The command's name as FiRa UCI spells it, for logs and errors.
    static func name(_ command: UCICommand) -> String {
        switch command {
        case .deviceReset: "CORE_DEVICE_RESET"
        case .getDeviceInfo: "CORE_GET_DEVICE_INFO"
        case .getCapsInfo: "CORE_GET_CAPS_INFO"
        case .sessionInit: "SESSION_INIT"
        case .sessionDeinit: "SESSION_DEINIT"
        case .setAppConfig: "SESSION_SET_APP_CONFIG"
        case .getAppConfig: "SESSION_GET_APP_CONFIG"
        case .updateControllerMulticastList: "SESSION_UPDATE_CONTROLLER_MULTICAST_LIST"
        case .sessionStart: "SESSION_START"
        case .sessionStop: "SESSION_STOP"
        case .androidSetCountryCode: "ANDROID_SET_COUNTRY_CODE"
        }
    }
}
