import UCI

/// One phone's side of Android's ranging OOB exchange with the rig as responder, for the
/// specification's connection-based flow (the phone, the initiator, connects over GATT and
/// writes first), as a pure state machine like `AccessorySession`: `receive(input, now:)` →
/// actions, no I/O, `now` the node's steady milliseconds.
///
/// The flow: Capability Request → Capability Response (in any state; the rig's offer does not
/// change while it ranges). Configuration → checked against the board, then the board session
/// started; the spec's optional Configuration Response ({UWB}) is sent once the board reports
/// ACTIVE, so it never claims a session the board refused. Stop Ranging naming UWB → the board
/// session stopped; the optional Stop Ranging Response follows its DEINIT (at once if nothing
/// runs). A session that ends under the phone (board failure, timeout, DEINIT on its own) is
/// ended for the phone with a Stop Ranging of the rig's own, which the spec lets either side
/// send. The link's end stops the board session and sends nothing. Replies take the version of
/// the message they answer.
///
/// Where the specification is silent (it defines no error message or status): a malformed
/// write, a message only a responder sends, a Configuration the board cannot run or one that
/// arrives while a session runs each get one typed `log`, no board command, no message to the
/// phone and no change of state, so the phone may stop and try again.
package struct AndroidOOBResponder: AndroidResponder {
    /// Where the machine is, with what is valid there.
    package enum State: Equatable, Sendable {
        /// Connected, no board session.
        case idle
        /// The board session is being started for a Configuration in `version`.
        case starting(AndroidSessionConfiguration, version: OOBVersion, deadline: Int64)
        /// The board reported ACTIVE and the phone was sent the Configuration Response.
        case ranging(AndroidSessionConfiguration, version: OOBVersion)
        /// The board session is being stopped. `answer`: the version of the phone's Stop
        /// Ranging, whose response follows the DEINIT; nil when the phone did not ask.
        case stopping(sessionID: UInt32, deadline: Int64, answer: OOBVersion?)
        /// The link has gone; every input is ignored.
        case ended
    }

    /// The only technology the rig ranges with.
    package static let technologies: RangingTechnologySet = .uwb

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
        case .starting(let configuration, _, _), .ranging(let configuration, _): configuration.sessionID
        case .stopping(let sessionID, _, _): sessionID
        case .idle, .ended: nil
        }
    }

    // MARK: The phone

    private mutating func phoneWrote(_ octets: [UInt8], now: Int64) -> [AndroidOOBResponderAction] {
        let message: OOBMessage
        do {
            message = try OOBMessage(octets)
        } catch {
            return [.log(.malformedMessage(error))]
        }
        switch message.payload {
        case .capabilityRequest(let requested): return [send(message.version, .capabilityResponse(capabilities(for: requested)))]
        case .configuration(let configuration): return configure(configuration, version: message.version, now: now)
        case .stopRanging(let technologies): return stopRanging(technologies, version: message.version, now: now)
        case .stopRangingResponse:
            // The phone's answer to a Stop Ranging of the rig's: nothing is waiting on it.
            return []
        case .capabilityResponse, .configurationResponse, .motionNotification:
            return [.log(.responderMessageFromPhone(message.id))]
        }
    }

    /// The board's offer for the requested technologies that it has: UWB or nothing. From
    /// version 2 the rig says it is a tag and cannot transition between technologies.
    private func capabilities(for requested: RangingTechnologySet) -> CapabilityResponse {
        guard requested.contains(.uwb) else { return CapabilityResponse(capabilities: [], deviceType: CapabilityResponse.deviceTypeTag) }
        let uwb = settings.board.capability(address: settings.shortAddress)
        return CapabilityResponse(capabilities: [.uwb(uwb)], deviceType: CapabilityResponse.deviceTypeTag)
    }

    private mutating func configure(_ configuration: RangingConfiguration, version: OOBVersion, now: Int64) -> [AndroidOOBResponderAction] {
        if let running = boardSessionID { return [.log(.configurationWhileBusy(session: running))] }
        let session: AndroidSessionConfiguration
        do throws(RangingConfigurationError) {
            let uwb = try settings.board.validate(configuration)
            session = try AndroidSessionConfiguration(uwb, deviceAddress: settings.shortAddress)
        } catch {
            return [.log(.refusedConfiguration(error))]
        }
        guard configuration.toStart.contains(.uwb) else { return [.log(.configurationDoesNotStartUWB)] }
        state = .starting(session, version: version, deadline: now + settings.startTimeoutMilliseconds)
        return [.startBoardSession(session)]
    }

    /// Stop Ranging. Without UWB in it, or with nothing running, it is answered at once with the
    /// technologies it named that are now not ranging.
    private mutating func stopRanging(_ technologies: RangingTechnologySet, version: OOBVersion, now: Int64) -> [AndroidOOBResponderAction] {
        let stopped = technologies.intersection(Self.technologies)
        switch state {
        case .starting(let configuration, _, _) where !stopped.isEmpty, .ranging(let configuration, _) where !stopped.isEmpty:
            state = .stopping(sessionID: configuration.sessionID, deadline: now + settings.stopTimeoutMilliseconds, answer: version)
            return [.stopBoardSession(sessionID: configuration.sessionID)]
        case let .stopping(sessionID, deadline, _) where !stopped.isEmpty:
            state = .stopping(sessionID: sessionID, deadline: deadline, answer: version)
            return []
        case .idle, .starting, .ranging, .stopping:
            return [send(version, .stopRangingResponse(boardSessionID == nil ? stopped : []))]
        case .ended:
            return []
        }
    }

    /// The link is gone: nothing more reaches the phone. A starting or ranging session is
    /// stopped; a stop under way goes on in the node.
    private mutating func linkEnded() -> [AndroidOOBResponderAction] {
        var actions: [AndroidOOBResponderAction] = []
        switch state {
        case .starting(let configuration, _, _), .ranging(let configuration, _):
            actions = [.log(.linkEnded(session: configuration.sessionID)), .stopBoardSession(sessionID: configuration.sessionID)]
        case .idle, .stopping, .ended:
            break
        }
        state = .ended
        return actions + [.close]
    }

    // MARK: The board

    private mutating func boardActive(_ session: UInt32) -> [AndroidOOBResponderAction] {
        guard case let .starting(configuration, version, _) = state, configuration.sessionID == session else { return [] }
        state = .ranging(configuration, version: version)
        return [send(version, .configurationResponse(Self.technologies))]
    }

    private mutating func boardStopped(_ session: UInt32) -> [AndroidOOBResponderAction] {
        guard session == boardSessionID else { return [] }
        switch state {
        case .starting(_, let version, _), .ranging(_, let version):
            state = .idle
            return [.log(.boardDroppedSession(session: session)), send(version, .stopRanging(Self.technologies))]
        case .stopping(_, _, let answer):
            state = .idle
            guard let answer else { return [] }
            return [send(answer, .stopRangingResponse(Self.technologies))]
        case .idle, .ended:
            return []
        }
    }

    private mutating func boardFailed(_ session: UInt32, status: StatusCode, now: Int64) -> [AndroidOOBResponderAction] {
        guard session == boardSessionID else { return [] }
        switch state {
        case .starting(_, let version, _), .ranging(_, let version):
            return giveUp(session, version: version, .boardFailed(session: session, status: status), now: now)
        case .stopping:
            // The Stop Ranging Response would claim a stop nobody saw.
            state = .idle
            return [.log(.stopFailed(session: session, status: status))]
        case .idle, .ended:
            return []
        }
    }

    /// A session that cannot go on: log why, stop it on the board, and end it for the phone
    /// with a Stop Ranging of the rig's own.
    private mutating func giveUp(
        _ session: UInt32, version: OOBVersion, _ reason: AndroidOOBResponderReason, now: Int64
    ) -> [AndroidOOBResponderAction] {
        state = .stopping(sessionID: session, deadline: now + settings.stopTimeoutMilliseconds, answer: nil)
        return [.log(reason), .stopBoardSession(sessionID: session), send(version, .stopRanging(Self.technologies))]
    }

    // MARK: Time

    /// Deadlines fire once more than their time has passed.
    private mutating func tick(now: Int64) -> [AndroidOOBResponderAction] {
        switch state {
        case let .starting(configuration, version, deadline) where now > deadline:
            let session = configuration.sessionID
            return giveUp(session, version: version, .startTimedOut(session: session, milliseconds: settings.startTimeoutMilliseconds), now: now)
        case let .stopping(sessionID, deadline, _) where now > deadline:
            state = .idle
            return [.log(.stopTimedOut(session: sessionID, milliseconds: settings.stopTimeoutMilliseconds))]
        default:
            return []
        }
    }

    private func send(_ version: OOBVersion, _ payload: OOBPayload) -> AndroidOOBResponderAction {
        .sendToPhone(OOBMessage(version: version, payload).encoded)
    }
}
