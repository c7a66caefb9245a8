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
    private let replies = PendingReplies()
    package let backendName: String

    package init(host: String, port: UInt16, body: String) throws {
        connection = try StreamConnection.connect(host: host, port: port)
        self.body = body
        backendName = "world:\(host):\(port)/\(body)"
    }

    package func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws {
        try await connection.write(AirFrame.hello(body: body).encoded())
        let welcome = try await nextReply()
        guard case .welcome = welcome else { throw BLEAdapterError.unavailable("world answered \(welcome)") }
        Task { [connection, replies] in
            var buffer: [UInt8] = []
            do {
                while let chunk = try await connection.read() {
                    buffer += chunk
                    while let frame = try AirFrame.next(from: &buffer) {
                        if case .event(let event) = frame {
                            events(event)
                        } else {
                            replies.resolveOldest(with: frame)
                        }
                    }
                }
            } catch {}
            replies.failAll(BLEAdapterError.disconnected("the world server closed the air link"))
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
        try await connection.write(AirFrame.advertise(data + scanResponse).encoded())
    }

    package func startScanning() async throws {
        try await connection.write(AirFrame.scan.encoded())
    }

    package func connect(to peer: BLEAddress) async throws -> LinkID {
        let reply = try await withCheckedThrowingContinuation { continuation in
            replies.append(continuation)
            do {
                try connection.writeNow(AirFrame.connect(peer).encoded())
            } catch {
                replies.failAll(error)
            }
        }
        guard case .connected(let link) = reply else { throw BLEAdapterError.disconnected("unexpected reply \(reply)") }
        return link
    }

    package func send(_ sdu: [UInt8], on link: LinkID) async throws {
        try await connection.write(AirFrame.send(link, sdu).encoded())
    }

    package func disconnect(_ link: LinkID) async {
        try? await connection.write(AirFrame.disconnect(link).encoded())
    }

    package func stop() async {
        connection.close()
    }
}

/// Callers waiting for a reply frame, answered in order.
private final class PendingReplies: Sendable {
    private let waiting = Mutex<[CheckedContinuation<AirFrame, any Error>]>([])

    func append(_ continuation: CheckedContinuation<AirFrame, any Error>) {
        waiting.withLock { $0.append(continuation) }
    }

    func resolveOldest(with frame: AirFrame) {
        waiting.withLock { $0.isEmpty ? nil : $0.removeFirst() }?.resume(returning: frame)
    }

    func failAll(_ error: any Error) {
        let all = waiting.withLock { pending in
            defer { pending = [] }
            return pending
        }
        all.forEach { $0.resume(throwing: error) }
    }
}
