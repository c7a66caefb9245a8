import BLE
import Synchronization
import StreamIO
import UCIHost

/// A BLE adapter whose air is a world server's (`--ble world:HOST:PORT/BODY`): the bridge in
/// this process discovers and talks to the world's peers through the same `BLEAdapter` seam a
/// real radio uses.
package final class RemoteAirAdapter: BLEAdapter {
    private let connection: StreamConnection
    private let body: String
    private let links = Mutex(LinkNames())
    package let backendName: String
    /// The rig's identity resolving key, for a keyed rig: the world gives the body LE privacy.
    private let identityResolvingKey: [UInt8]?
    package var boundAddresses: Bool { identityResolvingKey != nil }

    /// `identityResolvingKey`: the body advertises and connects from resolvable private
    /// addresses of this key, as a keyed rig's adapter does (`BlueZAdapter`).
    package init(host: String, port: UInt16, body: String, identityResolvingKey: [UInt8]? = nil) throws {
        connection = try StreamConnection.connect(host: host, port: port)
        self.body = body
        self.identityResolvingKey = identityResolvingKey
        backendName = "world:\(host):\(port)/\(body)"
    }

    package func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws {
        try connection.writeBlocking(AirFrame.hello(body: body).encoded())
        let welcome = try await nextReply()
        guard case .welcome = welcome else { throw BLEAdapterError.unavailable("world answered \(welcome)") }
        if let identityResolvingKey { try connection.writeBlocking(AirFrame.privacy(identityResolvingKey).encoded()) }
        Task { [connection, self] in
            var buffer: [UInt8] = []
            do {
                while let chunk = try await connection.read() {
                    buffer += chunk
                    while let frame = try AirFrame.next(from: &buffer) {
                        switch frame {
                        case .event(let event): events(self.links.withLock { $0.local(event) })
                        case .connected(let remote):
                            guard let close = self.links.withLock({ $0.connected(remote) }) else { continue }
                            try? connection.writeBlocking(AirFrame.disconnect(close).encoded())
                        default: break
                        }
                    }
                }
            } catch {}
            // Attempts the world never answered end as failed connections.
            for link in self.links.withLock({ $0.abandonPending() }) { events(.linkClosed(link)) }
        }
    }

    /// Reads the welcome frame before the event loop owns the socket.
    private func nextReply() async throws -> AirFrame {
        var buffer: [UInt8] = []
        while true {
            guard let chunk = try await connection.read() else {
                throw BLEAdapterError.disconnected("the world server closed the air link")
            }
            buffer += chunk
            if let frame = try AirFrame.next(from: &buffer) {
                if case .failure(let why) = frame { throw BLEAdapterError.unavailable(why) }
                return frame
            }
        }
    }

    package func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {
        try connection.writeBlocking(AirFrame.advertise(data + scanResponse).encoded())
    }

    package func startScanning() async throws {
        try connection.writeBlocking(AirFrame.scan.encoded())
    }

    /// Names the link at once and asks the world for it; the world's name for it arrives later
    /// (`connected`), and `LinkNames` translates between the two.
    package func connect(to peer: BLEAddress) throws -> LinkID {
        let link = links.withLock { $0.startConnecting() }
        do {
            try connection.writeBlocking(AirFrame.connect(peer).encoded())
        } catch {
            links.withLock { $0.abandon(link) }
            throw error
        }
        return link
    }

    /// Writes to the world server on this machine; waits only while its socket buffer is full.
    package func send(_ sdu: [UInt8], on link: LinkID) throws {
        guard let remote = links.withLock({ $0.remote(link) }) else { throw BLEAdapterError.unknownLink(link) }
        try connection.writeBlocking(AirFrame.send(remote, sdu).encoded())
    }

    package func disconnect(_ link: LinkID) {
        guard let remote = links.withLock({ $0.disconnect(link) }) else { return }
        try? connection.writeBlocking(AirFrame.disconnect(remote).encoded())
    }

    package func stop() async {
        connection.close()
    }
}

/// Our names for the world's links. Links a peer opens to us keep the world's name; a link we
/// open gets a name of ours at once (`connect` must not wait for the world's answer), from a
/// range the world's names never reach, and is translated once the world names it.
private struct LinkNames {
    /// Where our names start: the world numbers its links from 1 and never gets this far.
    private static let firstOwn: LinkID = 0x8000_0000
    private var next = firstOwn
    /// Our links the world has not named yet, in the order we asked for them (it answers in order).
    private var pending: [LinkID] = []
    /// Those of them closed before the world named them: closed as soon as it does.
    private var closeWhenNamed: Set<LinkID> = []
    private var remoteOf: [LinkID: LinkID] = [:]
    private var localOf: [LinkID: LinkID] = [:]

    mutating func startConnecting() -> LinkID {
        defer { next = next == .max ? Self.firstOwn : next + 1 }
        pending.append(next)
        return next
    }

    /// The world named our oldest pending link; returns its name if that link is to be closed.
    mutating func connected(_ remote: LinkID) -> LinkID? {
        guard !pending.isEmpty else { return nil }
        let local = pending.removeFirst()
        remoteOf[local] = remote
        localOf[remote] = local
        return closeWhenNamed.remove(local) != nil ? remote : nil
    }

    mutating func abandon(_ local: LinkID) {
        pending.removeAll { $0 == local }
    }

    mutating func abandonPending() -> [LinkID] {
        defer { pending = [] }
        return pending
    }

    func remote(_ local: LinkID) -> LinkID? {
        local < Self.firstOwn ? local : remoteOf[local]
    }

    /// The world's name of a link to close now, or nil (unknown, or closed once named).
    mutating func disconnect(_ local: LinkID) -> LinkID? {
        if pending.contains(local) {
            closeWhenNamed.insert(local)
            return nil
        }
        return remote(local)
    }

    /// An event from the world, in our names.
    mutating func local(_ event: BLEEvent) -> BLEEvent {
        switch event {
        case .linkOpened(let link, let peer, let initiatedLocally):
            return .linkOpened(localOf[link] ?? link, peer: peer, initiatedLocally: initiatedLocally)
        case .linkData(let link, let sdu):
            return .linkData(localOf[link] ?? link, sdu)
        case .linkClosed(let link):
            guard let local = localOf.removeValue(forKey: link) else { return event }
            remoteOf[local] = nil
            return .linkClosed(local)
        case .connectRefused(let link):
            return .connectRefused(localOf[link] ?? link)
        case .advertisement, .adapterPowered:
            return event
        }
    }
}
