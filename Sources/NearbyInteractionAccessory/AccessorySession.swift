import UCI

/// One connected phone's side of the Nearby Interaction accessory protocol, as a pure state
/// machine in swift-nio's style: `receive(input, now:) -> [AccessorySessionAction]`, no I/O, no
/// clock of its own (`now` is the node's steady milliseconds). The node owns one per phone link,
/// feeds it the phone's writes, the board's SESSION_STATUS_NTFs and failed commands, the link's
/// end and its ticks, and carries out the actions in order.
///
/// The flow (docs/PROTOCOL.md, "The accessory session"): 0x0A → 0x01; 0x0B → the blob checked
/// against the board, then the board session started; 0x02 only once the board reports the
/// session ACTIVE; 0x0C → the board session stopped and deinitialised; 0x03 only once the board
/// reports it DEINIT. A disconnected phone's board session is stopped and nothing is sent to it.
/// A refused message gets exactly one `log` and changes nothing, so the phone may try again.
package struct AccessorySession: Sendable {
    /// Where the machine is, with what is valid there.
    package enum State: Equatable, Sendable {
        /// Connected; the phone has not asked for anything yet.
        case idle
        /// 0x01 sent; no board session.
        case configurationSent
        /// The board session is being started; the phone hears 0x02 once it is ACTIVE.
        case starting(AccessorySessionConfiguration, deadline: Int64)
        /// The board reported the session ACTIVE and the phone was sent 0x02.
        case ranging(AccessorySessionConfiguration)
        /// The board session is being stopped and deinitialised. `tellPhone`: 0x03 follows the
        /// DEINIT (the phone asked to stop, or ranging ended under it). `next`: a configuration
        /// the phone sent meanwhile, started once the old session is gone.
        case stopping(sessionID: UInt32, deadline: Int64, tellPhone: Bool, next: AccessorySessionConfiguration?)
        /// A board session ran and is gone; the phone may configure another.
        case stopped
        /// The phone has gone; every input is ignored.
        case ended
    }

    package let settings: AccessorySessionSettings
    package private(set) var state = State.idle

    package init(settings: AccessorySessionSettings) {
        self.settings = settings
    }

    /// One input at `now`; what the node does about it, in order.
    package mutating func receive(_ input: AccessorySessionInput, now: Int64) -> [AccessorySessionAction] {
        if state == .ended { return [] }
        switch input {
        case .phoneWrote(let octets): return phoneWrote(octets, now: now)
        case let .boardSessionStatus(session, sessionState, reason):
            return boardStatus(session: session, state: sessionState, reason: reason, now: now)
        case let .boardCommandFailed(session, status): return commandFailed(session: session, status: status, now: now)
        case .phoneDisconnected: return disconnected()
        case .tick: return tick(now: now)
        }
    }

    /// The board session this machine answers for, if any.
    package var boardSessionID: UInt32? {
        switch state {
        case .starting(let configuration, _), .ranging(let configuration): configuration.sessionID
        case .stopping(let sessionID, _, _, _): sessionID
        case .idle, .configurationSent, .stopped, .ended: nil
        }
    }

    // MARK: The phone

    private mutating func phoneWrote(_ octets: [UInt8], now: Int64) -> [AccessorySessionAction] {
        let message: AccessoryMessage
        do {
            message = try AccessoryMessage(octets)
        } catch {
            return [.log(.malformedMessage(error))]
        }
        switch message {
        case .initialize: return initialize()
        case .configureAndStart(let blob): return configureAndStart(blob, now: now)
        case .stop: return stop(now: now)
        case .accessoryConfigurationData, .uwbDidStart, .uwbDidStop: return [.log(.accessoryMessageFromPhone(message.id))]
        }
    }

    /// 0x0A in any state: the rig's configuration data is the same whatever runs, so it is
    /// answered without touching a board session (a phone whose app restarted its NI session
    /// asks again before its new 0x0B).
    private mutating func initialize() -> [AccessorySessionAction] {
        switch state {
        case .idle, .stopped: state = .configurationSent
        case .configurationSent, .starting, .ranging, .stopping, .ended: break
        }
        return [.sendToPhone(.accessoryConfigurationData(settings.accessoryConfigurationData))]
    }

    /// 0x0B. Lenient about order: accepted without a 0x0A first, since the blob alone sets the
    /// session (a phone may keep the 0x01 of an earlier connection), and a 0x0A first would
    /// prove nothing (any GATT client can send one). A blob that does not pass changes nothing.
    private mutating func configureAndStart(_ blob: [UInt8], now: Int64) -> [AccessorySessionAction] {
        let configuration: AccessorySessionConfiguration
        do {
            let shareable = try ShareableConfiguration(parsing: blob, board: settings.capabilities)
            configuration = AccessorySessionConfiguration(
                shareable, deviceAddress: settings.shortAddress, order: settings.octetOrder)
        } catch {
            return [.log(.malformedConfiguration(error))]
        }
        switch state {
        case .idle, .configurationSent, .stopped:
            return start(configuration, now: now)
        case .starting(let running, _) where running == configuration:
            // A repeat of the write being served: 0x02 follows once the board is active.
            return []
        case .ranging(let running) where running == configuration:
            // A repeat of the running session's write: it is active, so 0x02 is true again.
            return [.sendToPhone(.uwbDidStart)]
        case .starting(let running, _), .ranging(let running):
            // The phone has a new NI session (a new session id and STS IV): the old board session
            // can never range with it again, so it is replaced rather than kept until a 0x0C that
            // would not come. The phone is not sent 0x03 for it: its app would read that as the
            // end of the session it just configured.
            state = .stopping(
                sessionID: running.sessionID, deadline: now + settings.stopTimeoutMilliseconds, tellPhone: false, next: configuration)
            return [
                .log(.replacingSession(old: running.sessionID, new: configuration.sessionID)),
                .stopBoardSession(sessionID: running.sessionID),
            ]
        case let .stopping(sessionID, deadline, tellPhone, _):
            state = .stopping(sessionID: sessionID, deadline: deadline, tellPhone: tellPhone, next: configuration)
            return []
        case .ended:
            return []
        }
    }

    private mutating func start(_ configuration: AccessorySessionConfiguration, now: Int64) -> [AccessorySessionAction] {
        state = .starting(configuration, deadline: now + settings.startTimeoutMilliseconds)
        return [.startBoardSession(configuration)]
    }

    /// 0x0C. With a board session, it is stopped and 0x03 follows its DEINIT; a configuration
    /// waiting to replace it is dropped. Without one, UWB is not running, so 0x03 is true at once
    /// and answers the phone's app, which waits for it.
    private mutating func stop(now: Int64) -> [AccessorySessionAction] {
        switch state {
        case .idle, .configurationSent, .stopped:
            return [.sendToPhone(.uwbDidStop)]
        case .starting(let configuration, _), .ranging(let configuration):
            state = .stopping(
                sessionID: configuration.sessionID, deadline: now + settings.stopTimeoutMilliseconds, tellPhone: true, next: nil)
            return [.stopBoardSession(sessionID: configuration.sessionID)]
        case let .stopping(sessionID, deadline, _, _):
            state = .stopping(sessionID: sessionID, deadline: deadline, tellPhone: true, next: nil)
            return []
        case .ended:
            return []
        }
    }

    /// The link is gone: nothing more can reach the phone. A starting or ranging board session
    /// is stopped; a stop under way goes on in the node (a configuration waiting on it is
    /// dropped).
    private mutating func disconnected() -> [AccessorySessionAction] {
        let running: UInt32? =
            switch state {
            case .starting(let configuration, _), .ranging(let configuration): configuration.sessionID
            default: nil
            }
        state = .ended
        guard let running else { return [.sessionEnded] }
        return [.log(.phoneDisconnected(session: running)), .stopBoardSession(sessionID: running), .sessionEnded]
    }

    // MARK: The board

    private mutating func boardStatus(
        session: UInt32, state sessionState: SessionState, reason: ReasonCode, now: Int64
    ) -> [AccessorySessionAction] {
        guard session == boardSessionID else { return [] }
        switch state {
        case .starting(let configuration, _):
            switch sessionState {
            case .active:
                state = .ranging(configuration)
                return [.sendToPhone(.uwbDidStart)]
            case .initialized:
                // After SESSION_INIT.
                return []
            case .idle where reason == .stateChangeWithSessionManagementCommands:
                // After SET_APP_CONFIG, before START.
                return []
            case .idle:
                // START refused with a configuration error (FiRa UCI: IDLE with the error as its
                // reason). The session is still initialised: deinitialise it.
                return giveUp(configuration.sessionID, .boardRefusedStart(session: session, reason: reason), now: now)
            case .deinitialized:
                state = .stopped
                return [.log(.boardDroppedStart(session: session, reason: reason))]
            }
        case .ranging(let configuration):
            switch sessionState {
            case .active, .initialized:
                return []
            case .idle:
                // Ranging ended under the phone (retries exhausted, in-band termination): the
                // session is deinitialised, and the phone told once it is.
                state = .stopping(
                    sessionID: configuration.sessionID, deadline: now + settings.stopTimeoutMilliseconds, tellPhone: true,
                    next: nil)
                return [.log(.boardStoppedRanging(session: session, reason: reason)), .stopBoardSession(sessionID: session)]
            case .deinitialized:
                state = .stopped
                return [.log(.boardDroppedSession(session: session, reason: reason)), .sendToPhone(.uwbDidStop)]
            }
        case .stopping:
            // IDLE (after STOP) and the rest are steps on the way; DEINIT is the end.
            return sessionState == .deinitialized ? stopped(now: now) : []
        case .idle, .configurationSent, .stopped, .ended:
            return []
        }
    }

    private mutating func commandFailed(session: UInt32, status: StatusCode, now: Int64) -> [AccessorySessionAction] {
        guard session == boardSessionID else { return [] }
        switch state {
        case .starting where status == .sessionNotExist:
            // The board has no such session: nothing to undo, and the phone hears nothing.
            state = .stopped
            return [.log(.startCommandFailed(session: session, status: status))]
        case .starting(let configuration, _):
            // Whatever of the start went through is undone; the phone hears nothing.
            return giveUp(configuration.sessionID, .startCommandFailed(session: session, status: status), now: now)
        case .ranging:
            return [.log(.commandFailedWhileRanging(session: session, status: status))]
        case .stopping:
            // A board that no longer knows the session has deinitialised it.
            if status == .sessionNotExist { return stopped(now: now) }
            return [.log(.deinitFailed(session: session, status: status))]
        case .idle, .configurationSent, .stopped, .ended:
            return []
        }
    }

    /// A start that cannot become ranging: log why, stop the board session, tell the phone
    /// nothing (0x02 would be false; 0x03 answers a 0x0C, which the phone did not send).
    private mutating func giveUp(_ sessionID: UInt32, _ reason: AccessorySessionReason, now: Int64) -> [AccessorySessionAction] {
        state = .stopping(sessionID: sessionID, deadline: now + settings.stopTimeoutMilliseconds, tellPhone: false, next: nil)
        return [.log(reason), .stopBoardSession(sessionID: sessionID)]
    }

    /// The board session is gone: 0x03 if owed, then the configuration waiting on it, if any.
    private mutating func stopped(now: Int64) -> [AccessorySessionAction] {
        guard case let .stopping(_, _, tellPhone, next) = state else { return [] }
        var actions: [AccessorySessionAction] = tellPhone ? [.sendToPhone(.uwbDidStop)] : []
        state = .stopped
        if let next { actions += start(next, now: now) }
        return actions
    }

    // MARK: Time

    /// Deadlines fire once more than their time has passed (as the node's other timers).
    private mutating func tick(now: Int64) -> [AccessorySessionAction] {
        switch state {
        case .starting(let configuration, let deadline) where now > deadline:
            return giveUp(
                configuration.sessionID,
                .startTimedOut(session: configuration.sessionID, milliseconds: settings.startTimeoutMilliseconds), now: now)
        case .stopping(let sessionID, let deadline, _, _) where now > deadline:
            // The board is not answering: 0x03 would claim a stop nobody saw, and a waiting
            // configuration is dropped rather than started on a board in an unknown state.
            state = .stopped
            return [.log(.stopTimedOut(session: sessionID, milliseconds: settings.stopTimeoutMilliseconds))]
        default:
            return []
        }
    }
}
