import Logging
import PeerProtocol
import UCI
import UCIHost

/// The one-to-many UWB sessions this node runs as controller, shared by the peers it controls
/// (`BridgeConfig.controleesPerSession`). A peer reserves a place while it negotiates (it needs
/// the session's parameters for its proposal), joins when the peer accepts, and leaves when
/// ranging ends. The first to join opens the session; later ones are added to its multicast
/// list; the last to leave closes it. Places are filled session by session, fullest first, so the
/// sessions in use stay close to peers / `limit`; the scheduler counts the sessions places are
/// in (`RangingScheduler.Demand`), since peers who leave can leave a session half-empty.
actor SharedSessions {
    private struct Session {
        var parameters: PeerMessage.RangingParameters
        /// The UWB session while it runs.
        var token: UInt32?
        /// Controlees ranging in it, in the order they joined.
        var joined: [UInt16] = []
        /// Controlees negotiating, or waiting to rejoin after the board came back.
        var reserved: Set<UInt16> = []
        var members: Int { joined.count + reserved.count }
    }

    private let uwb: UCIHost
    private let profile: UWBProfile
    private let ownAddress: UInt16
    private let limit: Int
    private let logger: Logger
    private var random: SplitMix64
    private var sessions: [UInt32: Session] = [:]
    /// Commands of one join or leave go out together: another peer's must not slip in between.
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(uwb: UCIHost, profile: UWBProfile, ownAddress: UInt16, limit: Int, logger: Logger, seed: UInt64) {
        self.uwb = uwb
        self.profile = profile
        self.ownAddress = ownAddress
        self.limit = limit
        self.logger = logger
        self.random = SplitMix64(seed: seed)
    }

    /// A place for `controlee` in the fullest session with room (a new one if none has), and the
    /// parameters to propose to it.
    func reserve(controlee: UInt16) -> PeerMessage.RangingParameters {
        let open = sessions.filter { $0.value.members < limit && !$0.value.joined.contains(controlee) && !$0.value.reserved.contains(controlee) }
        let id = open.max { ($0.value.members, $1.key) < ($1.value.members, $0.key) }?.key ?? newSession()
        sessions[id]?.reserved.insert(controlee)
        var parameters = sessions[id]!.parameters
        parameters.controleeAddress = controlee
        return parameters
    }

    private func newSession() -> UInt32 {
        var id: UInt32
        repeat { id = UInt32.random(in: 1...UInt32.max, using: &random) } while sessions[id] != nil
        sessions[id] = Session(
            parameters: PeerMessage.RangingParameters(
                sessionID: id, channel: profile.channel, preambleCodeIndex: profile.preambleCodeIndex,
                controllerAddress: ownAddress, controleeAddress: 0, vendorID: UInt16.random(in: 1...UInt16.max, using: &random),
                staticSTSIV: (0..<6).map { _ in UInt8.random(in: 0...255, using: &random) },
                rangingIntervalMilliseconds: profile.rangingIntervalMilliseconds,
                oneToManySlots: profile.oneToManySlots(controlees: limit)))
        return id
    }

    /// Starts ranging with a controlee that accepted the session `id`: opens the UWB session for
    /// the first one, adds later ones to its multicast list. Returns the session's token.
    func join(controlee: UInt16, session id: UInt32) async throws(UCIHostError) -> UInt32 {
        await acquire()
        defer { release() }
        guard var session = sessions[id], session.reserved.contains(controlee) else { throw .closed }
        if let token = session.token {
            try await uwb.updateMulticastList(session: token, .add, [Controlee(shortAddress: controlee, subSessionID: 0)])
        } else {
            var parameters = session.parameters
            parameters.controleeAddress = controlee
            let token = try await uwb.initSession(id: id)
            session.token = token
            sessions[id] = session
            do {
                try await uwb.setAppConfig(session: token, profile.appConfig(for: parameters, asController: true))
                try await uwb.startRanging(session: token)
            } catch {
                try? await uwb.deinitSession(token)
                sessions[id]?.token = nil
                throw error
            }
        }
        sessions[id]?.reserved.remove(controlee)
        sessions[id]?.joined.append(controlee)
        logger.info("controlee joined a one-to-many session", metadata: ["session": "\(id)", "controlees": "\(sessions[id]!.joined.count)"])
        return sessions[id]!.token!
    }

    /// Gives up `controlee`'s place: removes it from the multicast list, or closes the session
    /// if it was the last controlee ranging in it.
    func leave(controlee: UInt16, session id: UInt32) async {
        await acquire()
        defer { release() }
        guard var session = sessions[id] else { return }
        session.reserved.remove(controlee)
        if let index = session.joined.firstIndex(of: controlee) {
            session.joined.remove(at: index)
            if let token = session.token {
                do {
                    if session.joined.isEmpty {
                        session.token = nil
                        if await uwb.sessionStates[token] == .active { try await uwb.stopRanging(session: token) }
                        try await uwb.deinitSession(token)
                    } else {
                        try await uwb.updateMulticastList(session: token, .remove, [Controlee(shortAddress: controlee, subSessionID: 0)])
                    }
                } catch {
                    logger.warning("could not take a controlee off a one-to-many session", metadata: ["error": "\(error)"])
                }
            }
        }
        sessions[id] = session.members == 0 && session.token == nil ? nil : session
    }

    /// The board went away with its sessions: every controlee waits to join again.
    func boardLost() {
        for id in sessions.keys {
            sessions[id]?.token = nil
            sessions[id]?.reserved.formUnion(sessions[id]!.joined)
            sessions[id]?.joined = []
        }
    }

    private func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
