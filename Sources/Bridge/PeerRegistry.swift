import BLE
import Events
import Logging
import PeerProtocol
import Proximity
import UCI
import UCIHost

/// The dictionary of per-peer session actors, plus the indexes that route radio input to them:
/// by link (peer messages), by UWB session token (ranges), and links still waiting for `hello`.
actor PeerRegistry {
    private let context: PeerContext
    private var sessions: [PeerID: PeerSession] = [:]
    private var peerByLink: [LinkID: PeerID] = [:]
    private var peerByToken: [UInt32: PeerID] = [:]
    private var linksAwaitingHello: Set<LinkID> = []
    private var random: SplitMix64
    /// The closest peer across all sessions, and what the last `nearest` event said. Ranges
    /// update it as they come; ticks report it, so the ranges of one round (one peer after
    /// another) make one event rather than a burst.
    private var nearest: NearestTracker<PeerID>
    private var reportedNearest: NearestTracker<PeerID>.Nearest?

    init(context: PeerContext, seed: UInt64) {
        self.context = context
        self.random = SplitMix64(seed: seed)
        self.nearest = NearestTracker(config: context.config.proximity)
    }

    var peerCount: Int { sessions.count }

    // MARK: BLE

    func handle(_ event: BLEEvent) async {
        switch event {
        case .advertisement(let address, let rssi, let data):
            await advertisement(from: address, rssi: rssi, data: data)
        case .linkOpened(let link, _, let initiatedLocally):
            if initiatedLocally, let peer = peerByLink[link] {
                await sessions[peer]?.outgoingLinkOpened()
            } else {
                linksAwaitingHello.insert(link)
            }
        case .linkData(let link, let sdu):
            await linkData(sdu, on: link)
        case .linkClosed(let link):
            linksAwaitingHello.remove(link)
            guard let peer = peerByLink.removeValue(forKey: link), let session = sessions[peer] else { return }
            if await session.link == link {
                await session.linkClosed()
                await refreshToken(of: session)
            }
        }
    }

    private func advertisement(from address: BLEAddress, rssi: Int, data: [UInt8]) async {
        let advert: Advertisement?
        do {
            advert = try Advertisement.find(in: data)
        } catch {
            context.logger.debug("malformed advertisement", metadata: ["from": "\(address)", "error": "\(error)"])
            return
        }
        guard let advert, advert.group == context.identity.group, advert.peerID != context.identity.peerID else { return }
        let name = LocalName.find(in: data)
        let session = sessionFor(advert.peerID, name: name, rssi: rssi)
        await session.heard(advert, name: name, address: address)
        if let link = await session.connectIfInitiator() {
            peerByLink[link] = advert.peerID
        }
    }

    private func linkData(_ sdu: [UInt8], on link: LinkID) async {
        let message: PeerMessage
        do {
            message = try PeerMessage(frame: sdu)
        } catch {
            await drop(link, because: "undecodable message: \(error)")
            return
        }
        if linksAwaitingHello.contains(link) {
            guard case .hello(let hello) = message else {
                await drop(link, because: "first message was not hello")
                return
            }
            guard hello.group == context.identity.group, hello.peerID < context.identity.peerID else {
                await drop(link, because: "hello from \(hello.peerID) breaks group or role rules")
                return
            }
            linksAwaitingHello.remove(link)
            let session = sessionFor(hello.peerID, name: hello.name, rssi: nil)
            if let old = await session.link { peerByLink[old] = nil }
            peerByLink[link] = hello.peerID
            await session.incomingLinkAccepted(link, hello: hello)
            return
        }
        guard let peer = peerByLink[link], let session = sessions[peer] else {
            await drop(link, because: "message on an unknown link")
            return
        }
        switch await session.receive(message) {
        case .ok:
            await refreshToken(of: session)
        case .peerEnded:
            await remove(session, reason: .peerEnded)
        case .violation(let why):
            await drop(link, because: why)
            await session.linkClosed()
            await refreshToken(of: session)
        }
    }

    /// Closes a link whose peer broke the protocol; the peer keeps its registry entry.
    private func drop(_ link: LinkID, because reason: String) async {
        context.logger.warning("closing link", metadata: ["link": "\(link)", "reason": "\(reason)"])
        linksAwaitingHello.remove(link)
        peerByLink[link] = nil
        await context.ble.disconnect(link)
    }

    private func sessionFor(_ peer: PeerID, name: String?, rssi: Int?) -> PeerSession {
        if let existing = sessions[peer] { return existing }
        let session = PeerSession(peer: peer, context: context, seed: random.next())
        sessions[peer] = session
        context.emit(.peerFound(.init(peer: peer.description, name: name ?? "", rssi: rssi)))
        return session
    }

    private func refreshToken(of session: PeerSession) async {
        for (token, peer) in peerByToken where peer == session.peer { peerByToken[token] = nil }
        if let token = await session.uwbToken { peerByToken[token] = session.peer }
    }

    // MARK: UWB

    func handle(_ notification: UCINotification) async {
        switch notification {
        case .rangeData(let data):
            guard let peer = peerByToken[data.session], let session = sessions[peer] else { return }
            await session.ranges(data)
            let distance = await session.filteredDistance
            nearest.update(peer: peer, distance: distance, time: context.time.nowMilliseconds())
        case .sessionStatus(let token, let state, let reason)
        where (state == .deinitialized || state == .idle) && reason != .stateChangeWithSessionManagementCommands:
            guard let peer = peerByToken[token], let session = sessions[peer] else { return }
            await session.uwbSessionEnded(reason: reason)
            await refreshToken(of: session)
        case .sessionStatus, .deviceStatus, .genericError:
            break
        }
    }

    /// The UWB board went away: every session on it is gone, but the peers stay.
    func uwbLost() async {
        peerByToken = [:]
        for peer in sessions.keys.sorted() { await sessions[peer]?.uwbLost() }
    }

    /// The board is back: restart the sessions of peers we were ranging with.
    func resumeRanging() async {
        for peer in sessions.keys.sorted() {
            guard let session = sessions[peer] else { continue }
            await session.resumeUWB()
            await refreshToken(of: session)
        }
    }

    // MARK: Time and shutdown

    func tick() async {
        for peer in sessions.keys.sorted() {
            guard let session = sessions[peer] else { continue }
            if await session.tick() {
                await remove(session, reason: .timeout)
            }
        }
        nearest.expire(now: context.time.nowMilliseconds())
        reportNearest()
    }

    /// Writes a `nearest` event when the closest peer or its band differs from the last one written.
    private func reportNearest() {
        let current = nearest.current
        guard current?.peer != reportedNearest?.peer || current?.band != reportedNearest?.band else { return }
        reportedNearest = current
        context.emit(
            .nearest(
                .init(
                    peer: current?.peer.description, distance: current?.distance,
                    band: current.flatMap { Event.Nearest.Band(rawValue: $0.band.rawValue) })))
    }

    private func remove(_ session: PeerSession, reason: Event.PeerLost.Reason) async {
        await session.closeRadios(sayGoodbye: false)
        sessions[session.peer] = nil
        peerByLink = peerByLink.filter { $0.value != session.peer }
        peerByToken = peerByToken.filter { $0.value != session.peer }
        context.emit(.peerLost(.init(peer: session.peer.description, reason: reason)))
        nearest.remove(peer: session.peer, now: context.time.nowMilliseconds())
    }

    /// Says goodbye to every peer and releases their UWB sessions.
    func closeAll() async {
        for peer in sessions.keys.sorted() {
            await sessions[peer]?.closeRadios(sayGoodbye: true)
        }
    }
}

/// The Complete (0x09) or Shortened (0x08) Local Name AD structure, usually in the scan response.
enum LocalName {
    static func find(in data: [UInt8]) -> String? {
        var index = 0
        while index < data.count {
            let length = Int(data[index])
            guard length > 0, index + 1 + length <= data.count else { return nil }
            let type = data[index + 1]
            if type == 0x09 || type == 0x08 {
                return String(validating: data[(index + 2)..<(index + 1 + length)], as: UTF8.self)
            }
            index += 1 + length
        }
        return nil
    }
}
