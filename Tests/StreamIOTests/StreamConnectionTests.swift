import Glibc
import SystemPackage
import Testing

@testable import StreamIO

/// Closing a stream connection: the reader and writers are woken through the eventfd, and the
/// descriptor is closed once, after they let go (never under a thread still using it).
@Suite struct StreamConnectionCloseTests {
    /// One end of a socket pair moved to a number far above those other tests' descriptors get,
    /// so that another test reusing the number cannot hide a missing or a second close.
    static func socketPair() throws -> (high: Int32, peer: Int32) {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let high = fcntl(pair[0], F_DUPFD_CLOEXEC, 900 + Int32.random(in: 0..<90))
        Glibc.close(pair[0])
        try #require(high >= 900)
        return (high, pair[1])
    }

    static func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) != -1 || errno != EBADF }

    /// Awaits `body`, failing the test if it takes longer than `limit`.
    static func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            let first = try await group.next()!
            return try #require(first, "did not finish within \(limit)")
        }
    }

    @Test(arguments: [true, false]) func closingWhileThePeerIsSilentEndsTheReaderAndClosesTheDescriptorOnce(isSocket: Bool) async throws {
        let (fd, peer) = try Self.socketPair()
        defer { Glibc.close(peer) }
        var connection: StreamConnection? = StreamConnection(fd: FileDescriptor(rawValue: fd), description: "socketpair", isSocket: isSocket)
        let reading = Task { [connection] in try await connection!.read() }
        try await Task.sleep(for: .milliseconds(50))  // the reader thread waits in poll, the read is pending
        #expect(Self.isOpen(fd))

        connection!.close()
        let bytes = try await Self.within(.seconds(30)) { try await reading.value }
        #expect(bytes == nil)
        // The reader gave the descriptor back before ending the stream: it is closed now.
        #expect(!Self.isOpen(fd))
        var eof = [UInt8](repeating: 0, count: 1)
        #expect(recv(peer, &eof, 1, Int32(MSG_DONTWAIT)) == 0)

        // Put another file at the number: nothing may close it (no second close, late or on release).
        let placeholder = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(placeholder >= 0)
        try #require(dup2(placeholder, fd) == fd)
        Glibc.close(placeholder)
        defer { Glibc.close(fd) }
        connection!.close()
        connection = nil
        try await Task.sleep(for: .milliseconds(50))
        #expect(Self.isOpen(fd))
    }

    /// A writer stuck on a peer that does not read is woken by `close`, and the descriptor is
    /// closed only after both it and the reader let go.
    @Test func closingWakesABlockedWriter() async throws {
        let (fd, peer) = try Self.socketPair()
        defer { Glibc.close(peer) }
        let connection = StreamConnection(fd: FileDescriptor(rawValue: fd), description: "socketpair")
        let reading = Task { try await connection.read() }
        let writing = Task { try connection.writeBlocking([UInt8](repeating: 0x55, count: 8 << 20)) }
        try await Task.sleep(for: .milliseconds(100))  // far more than the socket buffers hold
        connection.close()
        let outcome = try await Self.within(.seconds(30)) { await writing.result }
        #expect(throws: TransportError.closed) { try outcome.get() }
        #expect(try await Self.within(.seconds(30)) { try await reading.value } == nil)
        #expect(!Self.isOpen(fd))
        #expect(throws: TransportError.closed) { try connection.writeBlocking([1]) }
    }

    @Test func closingAListenerEndsItsAcceptLoop() async throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        listener.acceptLoop { _ in }
        try await Task.sleep(for: .milliseconds(20))
        listener.close()
        // The accept thread lets go promptly and the port refuses connections.
        let deadline = ContinuousClock.now + .seconds(30)
        var refused = false
        while !refused, ContinuousClock.now < deadline {
            do {
                _ = try StreamConnection.connect(host: "127.0.0.1", port: listener.port)
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                refused = true
            }
        }
        #expect(refused)
    }
}
