import Logging
import PeerProtocol
import StreamIO
import Synchronization
import UCI
import UCIHost

/// The one owner of the board's ranging sessions, unicast and one-to-many.
///
/// Peers ask (`open`, `close`, `reserve`) without waiting: requests are booked at once, in the
/// order they are made, and a worker task runs their UCI commands one request at a time (the
/// UCI allows one command in flight), reporting each outcome as an input to the node. A board
/// that is slow to answer one peer's SESSION_INIT delays the next peer's session set-up, never
/// the node, its ranges or its ticks.
///
/// A command the board leaves unanswered (after the UCI host has sent it again) fails only the
/// request it belongs to, as long as the board still answers a probe: a board that keeps
/// ranging everyone else is not reset for one peer's sake, and that peer's start is retried
/// with back-off. When the probe goes unanswered too, the board is reported unresponsive and
/// the node reopens, resets and re-creates everything.
///
/// One-to-many sessions (`BridgeConfig.controleesPerSession` > 1): a peer we control reserves a
/// place while it negotiates (its proposal carries the session's parameters), joins when the
/// peer accepts, and leaves when ranging ends. The first to join opens the session; later ones
/// are added to its multicast list; the last to leave closes it. Places are filled session by
/// session, fullest first, so the sessions in use stay close to peers / `limit`.
final class UWBSessions: Sendable {
    private enum Operation: Sendable {
        case open(PeerID, UWBSessionRequest)
        case openPhone(PeerID, sessionID: UInt32, appConfig: [AppConfigTLV])
        case close(PeerID)
        case boardLost
        case bringUp
        case probe

        /// Whether a command left unanswered in this operation calls for a probe: bring-up
        /// failures are the node's to handle, and a probe that went unanswered has said enough.
        var mayProbe: Bool {
            switch self {
            case .open, .openPhone, .close: true
            case .boardLost, .bringUp, .probe: false
            }
        }
    }

    /// Places in one-to-many sessions, as booked: what `reserve` decides from.
    private struct Bookings {
        struct Shared {
            var parameters: PeerMessage.RangingParameters
            var members: Set<UInt16> = []
        }
        var shared: [UInt32: Shared] = [:]
        var placeOf: [PeerID: (session: UInt32, controlee: UInt16)] = [:]
        var random: SplitMix64
    }

    /// What runs on the board: owned by the worker task alone.
    private struct Board {
        var unicast: [PeerID: UInt32] = [:]
        /// One-to-many sessions: their token and the controlees ranging in them, in join order.
        var shared: [UInt32: (token: UInt32, joined: [UInt16])] = [:]
        var joinedSession: [PeerID: (session: UInt32, controlee: UInt16)] = [:]
    }

    private let uwb: UCIHost
    private let dialect: any UWBDialect
    private let profile: UWBProfile
    /// What the board said about itself at its last bring-up: the dialect configures for it.
    private let board = Mutex<BoardDescription?>(nil)
    private let ownAddress: UInt16
    private let limit: Int
    private let logger: Logger
    private let tracker: WorkTracker?
    private let report: @Sendable (UWBSessionsEvent) -> Void
    private let bookings: Mutex<Bookings>
    private let operations: AsyncStream<Operation>.Continuation
    private let queue: Mutex<AsyncStream<Operation>?>

    init(
        uwb: UCIHost, dialect: any UWBDialect, profile: UWBProfile, ownAddress: UInt16, controleesPerSession: Int, logger: Logger, seed: UInt64,
        tracker: WorkTracker?, report: @escaping @Sendable (UWBSessionsEvent) -> Void
    ) {
        self.uwb = uwb
        self.dialect = dialect
        self.profile = profile
        self.ownAddress = ownAddress
        self.limit = controleesPerSession
        self.logger = logger
        self.tracker = tracker
        self.report = report
        self.bookings = Mutex(Bookings(random: SplitMix64(seed: seed)))
        let (stream, continuation) = AsyncStream<Operation>.makeStream()
        self.operations = continuation
        self.queue = Mutex(stream)
    }

    // MARK: Requests (never wait)

    /// A place for `controlee` in the fullest one-to-many session with room (a new one if none
    /// has), and the parameters to propose to it.
    func reserve(peer: PeerID, controlee: UInt16) -> PeerMessage.RangingParameters {
        bookings.withLock { b in
            if let old = b.placeOf.removeValue(forKey: peer) { b.shared[old.session]?.members.remove(old.controlee) }
            let open = b.shared.filter { $0.value.members.count < limit && !$0.value.members.contains(controlee) }
            let id = open.max { ($0.value.members.count, $1.key) < ($1.value.members.count, $0.key) }?.key ?? newSession(&b)
            b.shared[id]?.members.insert(controlee)
            b.placeOf[peer] = (id, controlee)
            var parameters = b.shared[id]!.parameters
            parameters.controleeAddress = controlee
            return parameters
        }
    }

    private func newSession(_ b: inout Bookings) -> UInt32 {
        var id: UInt32
        repeat { id = UInt32.random(in: 1...UInt32.max, using: &b.random) } while b.shared[id] != nil
        b.shared[id] = .init(
            parameters: PeerMessage.RangingParameters(
                sessionID: id, channel: profile.channel, preambleCodeIndex: profile.preambleCode(session: id),
                controllerAddress: ownAddress, controleeAddress: 0, vendorID: UInt16.random(in: 1...UInt16.max, using: &b.random),
                staticSTSIV: (0..<6).map { _ in UInt8.random(in: 0...255, using: &b.random) },
                rangingIntervalMilliseconds: profile.rangingIntervalMilliseconds,
                oneToManySlots: profile.oneToManySlots(controlees: limit)))
        return id
    }

    /// Opens the session `request` describes for `peer` (joins its reserved place when shared);
    /// reports `.started` or `.failed`.
    func open(peer: PeerID, _ request: UWBSessionRequest) {
        enqueue(.open(peer, request))
    }

    /// Opens a phone's session: SESSION_INIT with the phone's session id, its app config (what
    /// its shareable configuration maps to) with the dialect's report TLVs after it, SESSION_START;
    /// reports `.started` or `.failed`. `close(peer:)` ends it.
    func open(phone: PeerID, sessionID: UInt32, appConfig: [AppConfigTLV]) {
        enqueue(.openPhone(phone, sessionID: sessionID, appConfig: appConfig))
    }

    /// Gives up whatever `peer` has on the board: its session, its place in a shared one.
    func close(peer: PeerID) {
        bookings.withLock { b in
            guard let place = b.placeOf.removeValue(forKey: peer) else { return }
            b.shared[place.session]?.members.remove(place.controlee)
            if b.shared[place.session]?.members.isEmpty == true { b.shared[place.session] = nil }
        }
        enqueue(.close(peer))
    }

    /// The board went away with its sessions: forget them; places stay booked for the rejoin.
    func boardLost() {
        enqueue(.boardLost)
    }

    /// Brings a board that came back up (reset, device info, capabilities); reports
    /// `.boardReady` or `.boardFailed`.
    func bringUp() {
        enqueue(.bringUp)
    }

    /// Asks the board something cheap (CORE_GET_DEVICE_INFO) if sessions run on it; reports
    /// `.boardUnresponsive` when it does not answer. For a board that has gone quiet while ranging.
    func probe() {
        enqueue(.probe)
    }

    private func enqueue(_ operation: Operation) {
        tracker?.begin()
        if case .dropped = operations.yield(operation) { tracker?.end() }
    }

    // MARK: The worker

    /// Runs requests until `finish`; what is queued then still runs (sessions deinitialised).
    func run() async {
        guard let stream = queue.withLock({ q in defer { q = nil }; return q }) else { return }
        var board = Board()
        for await operation in stream {
            let unanswered = uwb.unansweredCommands
            await perform(operation, on: &board)
            if uwb.unansweredCommands > unanswered, operation.mayProbe { await probeNow() }
            tracker?.end()
        }
    }

    /// Lets the worker end once what is queued has run.
    func finish() {
        operations.finish()
    }

    private func perform(_ operation: Operation, on board: inout Board) async {
        switch operation {
        case .open(let peer, let request):
            let sessionID = request.parameters.sessionID
            do {
                let token =
                    request.shared
                    ? try await join(peer, request, on: &board)
                    : try await openUnicast(peer, request, on: &board)
                report(.started(peer, sessionID: sessionID, token: token))
            } catch {
                report(.failed(peer, sessionID: sessionID, error: error))
            }
        case .openPhone(let phone, let sessionID, let appConfig):
            await close(phone, on: &board)
            do {
                let reports = dialect.reports(board: self.board.withLock { $0 })
                let token = try await startSession(id: sessionID, appConfig: appConfig + reports, on: board)
                board.unicast[phone] = token
                report(.started(phone, sessionID: sessionID, token: token))
            } catch {
                report(.failed(phone, sessionID: sessionID, error: error))
            }
        case .close(let peer):
            await close(peer, on: &board)
        case .boardLost:
            board.unicast = [:]
            board.shared = [:]
            board.joinedSession = [:]
        case .bringUp:
            do {
                report(.boardReady(try await bringUpNow()))
            } catch {
                report(.boardFailed(error))
            }
        case .probe:
            guard !board.unicast.isEmpty || !board.shared.isEmpty else { return }
            await probeNow()
        }
    }

    /// Asks the board something cheap; reports it unresponsive if that goes unanswered.
    private func probeNow() async {
        do {
            _ = try await uwb.deviceInfo()
        } catch {
            report(.boardUnresponsive(error))
        }
    }

    /// Whether the board (as it last came up) runs provisioned STS.
    var supportsProvisionedSTS: Bool { board.withLock { $0?.supportsProvisionedSTS ?? false } }

    /// Whether the board (as it last came up) hops rounds and the profile lets sessions hop.
    var hopsRounds: Bool { profile.hopsRounds && board.withLock { $0?.supportsRoundHopping ?? false } }

    /// Brings the board up in the dialect's way and keeps what it said, for the app configs to come.
    func bringUpNow() async throws(UCIHostError) -> BoardDescription {
        let description = try await dialect.bringUp(uwb, profile: profile)
        board.withLock { $0 = description }
        return description
    }

    private func appConfig(_ request: UWBSessionRequest) -> [AppConfigTLV] {
        dialect.appConfig(
            for: request.parameters, asController: request.asController, sts: request.sts, hops: request.hops, profile: profile,
            board: board.withLock { $0 })
    }

    private func openUnicast(_ peer: PeerID, _ request: UWBSessionRequest, on board: inout Board) async throws(UCIHostError) -> UInt32 {
        await close(peer, on: &board)
        let token = try await startSession(id: request.parameters.sessionID, appConfig: appConfig(request), on: board)
        board.unicast[peer] = token
        return token
    }

    /// SESSION_INIT for session `id`, SET_APP_CONFIG with `appConfig` and SESSION_START; a session that does not
    /// start is deinitialised before the error is passed on. A board that answers SESSION_INIT
    /// with SESSION_DUPLICATE holds a session from an earlier SESSION_INIT whose answer never
    /// came: the sessions it reported that are none of ours are deinitialised, and the
    /// SESSION_INIT is sent once more.
    private func startSession(id: UInt32, appConfig: [AppConfigTLV], on board: Board) async throws(UCIHostError) -> UInt32 {
        let token: UInt32
        do {
            token = try await uwb.initSession(id: id)
        } catch .commandFailed(_, .sessionDuplicate) {
            let owned = Set(board.unicast.values).union(board.shared.values.map(\.token))
            let orphans = uwb.sessionStates.keys.filter { !owned.contains($0) }.sorted()
            logger.warning("the board already holds this session: deinitialising the ones it reported that are not ours",
                metadata: ["session": "\(id)", "orphans": "\(orphans)"])
            for orphan in orphans { await deinitialize(orphan) }
            token = try await uwb.initSession(id: id)
        }
        do {
            try await uwb.setAppConfig(session: token, appConfig)
            try await uwb.startRanging(session: token)
        } catch {
            await deinitialize(token)
            throw error
        }
        return token
    }

    /// Starts ranging with a controlee in its one-to-many session: opens the session for the
    /// first one, adds later ones to its multicast list.
    private func join(_ peer: PeerID, _ request: UWBSessionRequest, on board: inout Board) async throws(UCIHostError) -> UInt32 {
        let id = request.parameters.sessionID
        let controlee = request.parameters.controleeAddress
        if let joined = board.joinedSession[peer], joined == (id, controlee) { return board.shared[id]!.token }
        await close(peer, on: &board)
        if let running = board.shared[id] {
            try await uwb.updateMulticastList(session: running.token, .add, [Controlee(shortAddress: controlee, subSessionID: 0)])
        } else {
            board.shared[id] = (try await startSession(id: id, appConfig: appConfig(request), on: board), [])
        }
        board.shared[id]!.joined.append(controlee)
        board.joinedSession[peer] = (id, controlee)
        logger.info("controlee joined a one-to-many session", metadata: ["session": "\(id)", "controlees": "\(board.shared[id]!.joined.count)"])
        return board.shared[id]!.token
    }

    private func close(_ peer: PeerID, on board: inout Board) async {
        if let token = board.unicast.removeValue(forKey: peer) {
            await stopAndDeinit(token)
        }
        guard let place = board.joinedSession.removeValue(forKey: peer), var session = board.shared[place.session] else { return }
        session.joined.removeAll { $0 == place.controlee }
        if session.joined.isEmpty {
            board.shared[place.session] = nil
            await stopAndDeinit(session.token)
            return
        }
        board.shared[place.session] = session
        do {
            try await uwb.updateMulticastList(session: session.token, .remove, [Controlee(shortAddress: place.controlee, subSessionID: 0)])
        } catch {
            logger.warning("could not take a controlee off a one-to-many session", metadata: ["error": "\(error)"])
        }
    }

    /// Ends a session in whatever state the board left it: an active one is stopped first, one
    /// the board already deinitialised is only forgotten.
    private func stopAndDeinit(_ token: UInt32) async {
        let state = uwb.sessionStates[token]
        if state == .deinitialized { return }
        if state == .active {
            do {
                try await uwb.stopRanging(session: token)
            } catch {
                logger.warning("SESSION_STOP failed", metadata: ["error": "\(error)"])
            }
        }
        await deinitialize(token)
    }

    private func deinitialize(_ token: UInt32) async {
        do {
            try await uwb.deinitSession(token)
        } catch {
            logger.warning("SESSION_DEINIT failed", metadata: ["error": "\(error)"])
        }
    }
}
