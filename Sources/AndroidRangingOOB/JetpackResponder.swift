import UCI

/// One Jetpack phone app's exchange with the rig (issue 31: "Jetpack-compatible parameters"), as a
/// pure state machine in the style of `AndroidOOBResponder` and with its input and action types, so
/// the node runs either for an Android phone: `receive(input, now:)` → actions, no I/O, `now` the
/// node's steady milliseconds. `.phoneWrote` is one write on `AndroidOOBGATTService.jetpack`, and
/// `.sendToPhone` one notification on the same characteristic (a `JetpackAnswer`).
///
/// The flow (docs/android-jetpack.md): parameters → checked against the board
/// (`JetpackParameters.configuration(for:)`, then the OOB path's `AndroidSessionConfiguration`, so
/// the board gets the same TLVs) → "accepted" with the rig's address, role and complex channel at
/// once, since the app needs them before it can call `prepareSession`, and the board session
/// started. ACTIVE sends nothing: Jetpack ranges on its own, and its results show the app the
/// session works. Stop → the board session stopped, "stopped" after the DEINIT (at once if nothing
/// runs). A session that ends under the phone (board failure, start timeout, DEINIT on its own) is
/// stopped on the board and the phone sent "stopped" with the reason. The link's end stops the
/// board session and closes the machine.
///
/// Unlike the OOB specification, this layout has a refusal: a malformed write, parameters the
/// board cannot run or parameters while a session runs each get one `log` and a "refused" answer
/// with a reason code, no board command and no change of state, so the app can correct and retry.
package struct JetpackResponder: AndroidResponder {
    /// Where the machine is, with what is valid there.
    package enum State: Equatable, Sendable {
        /// Connected, no board session.
        case idle
        /// The phone was told "accepted"; the board session is being started.
        case starting(AndroidSessionConfiguration, deadline: Int64)
        /// The board reported ACTIVE.
        case ranging(AndroidSessionConfiguration)
        /// The board session is being stopped; `answer`: the phone asked, so "stopped" follows
        /// the DEINIT.
        case stopping(sessionID: UInt32, deadline: Int64, answer: Bool)
        /// The link has gone; every input is ignored.
        case ended
    }

    package let settings: AndroidOOBResponderSettings
    package private(set) var state = State.idle

    package init(settings: AndroidOOBResponderSettings) {
        self.settings = settings
    }

    /// One input at `now`; what the node does about it, in order.
    package mutating func receive(_ input: AndroidOOBResponderInput, now: Int64) -> [AndroidOOBResponderAction] {
        if state == .ended { return [] }
        switch input {
        case .phoneWrote(let octets): return phoneWrote(octets, now: now)
        case .boardSessionActive(let session): return boardActive(session)
        case .boardSessionStopped(let session): return boardStopped(session)
        case let .boardSessionFailed(session, status): return boardFailed(session, status: status, now: now)
        case .linkEnded: return linkEnded()
        case .tick: return tick(now: now)
        }
    }

    /// The board session this machine answers for, if any.
    package var boardSessionID: UInt32? {
        switch state {
        case .starting(let configuration, _), .ranging(let configuration): configuration.sessionID
        case .stopping(let sessionID, _, _): sessionID
        case .idle, .ended: nil
        }
    }

    // MARK: The phone

    private mutating func phoneWrote(_ octets: [UInt8], now: Int64) -> [AndroidOOBResponderAction] {
        let request: JetpackRequest
        do {
            request = try JetpackRequest(octets)
        } catch {
            return [.log(.malformedJetpackMessage(error)), send(.refused(.malformed))]
        }
        switch request {
        case .parameters(let parameters): return start(parameters, now: now)
        case .stop: return stop(now: now)
        }
    }

    private mutating func start(_ parameters: JetpackParameters, now: Int64) -> [AndroidOOBResponderAction] {
        if let running = boardSessionID { return [.log(.jetpackParametersWhileBusy(session: running)), send(.refused(.busy))] }
        let uwb: UWBConfiguration
        let session: AndroidSessionConfiguration
        do throws(JetpackParametersError) {
            uwb = try parameters.configuration(for: settings.board)
            do {
                session = try AndroidSessionConfiguration(uwb, deviceAddress: settings.shortAddress)
            } catch {
                throw .configuration(error)
            }
        } catch {
            return [.log(.refusedJetpackParameters(error)), send(.refused(JetpackReasonCode(error)))]
        }
        state = .starting(session, deadline: now + settings.startTimeoutMilliseconds)
        let accepted = JetpackAnswer.accepted(
            rigAddress: settings.shortAddress, rigRole: parameters.role.peer, channel: uwb.channel, preambleIndex: uwb.preambleIndex)
        return [send(accepted), .startBoardSession(session)]
    }

    /// Stop: answered after the DEINIT, or at once when nothing runs.
    private mutating func stop(now: Int64) -> [AndroidOOBResponderAction] {
        switch state {
        case .starting(let configuration, _), .ranging(let configuration):
            state = .stopping(sessionID: configuration.sessionID, deadline: now + settings.stopTimeoutMilliseconds, answer: true)
            return [.stopBoardSession(sessionID: configuration.sessionID)]
        case let .stopping(sessionID, deadline, _):
            state = .stopping(sessionID: sessionID, deadline: deadline, answer: true)
            return []
        case .idle:
            return [send(.stopped(.requested))]
        case .ended:
            return []
        }
    }

    /// The link is gone: nothing more reaches the phone. A starting or ranging session is
    /// stopped; a stop under way goes on in the node.
    private mutating func linkEnded() -> [AndroidOOBResponderAction] {
        var actions: [AndroidOOBResponderAction] = []
        switch state {
        case .starting(let configuration, _), .ranging(let configuration):
            actions = [.log(.linkEnded(session: configuration.sessionID)), .stopBoardSession(sessionID: configuration.sessionID)]
        case .idle, .stopping, .ended:
            break
        }
        state = .ended
        return actions + [.close]
    }

    // MARK: The board

    private mutating func boardActive(_ session: UInt32) -> [AndroidOOBResponderAction] {
        guard case .starting(let configuration, _) = state, configuration.sessionID == session else { return [] }
        state = .ranging(configuration)
        return []
    }

    private mutating func boardStopped(_ session: UInt32) -> [AndroidOOBResponderAction] {
        guard session == boardSessionID else { return [] }
        switch state {
        case .starting, .ranging:
            state = .idle
            return [.log(.boardDroppedSession(session: session)), send(.stopped(.boardStopped))]
        case .stopping(_, _, let answer):
            state = .idle
            return answer ? [send(.stopped(.requested))] : []
        case .idle, .ended:
            return []
        }
    }

    private mutating func boardFailed(_ session: UInt32, status: StatusCode, now: Int64) -> [AndroidOOBResponderAction] {
        guard session == boardSessionID else { return [] }
        switch state {
        case .starting, .ranging:
            return giveUp(session, .boardFailed(session: session, status: status), now: now)
        case .stopping:
            // "Stopped" would claim a stop nobody saw.
            state = .idle
            return [.log(.stopFailed(session: session, status: status))]
        case .idle, .ended:
            return []
        }
    }

    /// A session that cannot go on: log why, stop it on the board, and tell the phone it stopped.
    private mutating func giveUp(_ session: UInt32, _ reason: AndroidOOBResponderReason, now: Int64) -> [AndroidOOBResponderAction] {
        state = .stopping(sessionID: session, deadline: now + settings.stopTimeoutMilliseconds, answer: false)
        return [.log(reason), .stopBoardSession(sessionID: session), send(.stopped(.boardFailed))]
    }

    // MARK: Time

    /// Deadlines fire once more than their time has passed.
    private mutating func tick(now: Int64) -> [AndroidOOBResponderAction] {
        switch state {
        case let .starting(configuration, deadline) where now > deadline:
            let session = configuration.sessionID
            return giveUp(session, .startTimedOut(session: session, milliseconds: settings.startTimeoutMilliseconds), now: now)
        case let .stopping(sessionID, deadline, _) where now > deadline:
            state = .idle
            return [.log(.stopTimedOut(session: sessionID, milliseconds: settings.stopTimeoutMilliseconds))]
        default:
            return []
        }
    }

    private func send(_ answer: JetpackAnswer) -> AndroidOOBResponderAction { .sendToPhone(answer.encoded) }
}
