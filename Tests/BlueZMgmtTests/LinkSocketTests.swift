import BLE
import Foundation
import Glibc
import Synchronization
import SystemPackage
import Testing

@testable import BLEBlueZ

/// The L2CAP link record, with an AF_UNIX SOCK_SEQPACKET socket pair standing in for the channel
/// (the same one-SDU-per-call semantics, no Bluetooth needed).
@Suite struct LinkSocketTests {
    /// A socket pair whose first end sits at a number far above those other tests' descriptors
    /// get, so that a reuse of the number by another test cannot mask or fake a result.
    static func socketPair() throws -> (high: Int32, peer: Int32) {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        let high = fcntl(pair[0], F_DUPFD_CLOEXEC, 900 + Int32.random(in: 0..<90))
        Glibc.close(pair[0])
        try #require(high >= 900)
        return (high, pair[1])
    }

    static func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) != -1 || errno != EBADF }

    /// What arrived at `fd` without waiting: bytes, [] for end of stream, nil for nothing.
    static func pending(_ fd: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count < 0 ? nil : Array(buffer[0..<count])
    }

    /// Puts a fresh socket at `number`; returns the other end of it.
    static func occupy(_ number: Int32) throws -> Int32 {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        try #require(dup2(pair[0], number) == number)
        Glibc.close(pair[0])
        return pair[1]
    }

    @Test func sdusArriveWholeAndSendsGoOut() throws {
        let (fd, peer) = try Self.socketPair()
        defer { Glibc.close(peer) }
        let socket = LinkSocket(FileDescriptor(rawValue: fd))
        try socket.send([1, 2, 3], link: 1)
        try socket.send([4], link: 1)
        #expect(Self.pending(peer) == [1, 2, 3])
        #expect(Self.pending(peer) == [4])
        socket.close()
    }

    /// Once the owner closed the socket, a send fails and never reaches whatever the kernel
    /// gave the number to next (the race the old fd-in-a-table design had).
    @Test func aSendAfterTheOwnerClosedNeverReachesTheNumbersNextFile() throws {
        let (fd, peer) = try Self.socketPair()
        defer { Glibc.close(peer) }
        let socket = LinkSocket(FileDescriptor(rawValue: fd))
        socket.close()
        #expect(!Self.isOpen(fd))
        #expect(Self.pending(peer) == [])  // the peer saw the channel end
        let stranger = try Self.occupy(fd)
        defer {
            Glibc.close(stranger)
            Glibc.close(fd)
        }
        #expect(throws: BLEAdapterError.unknownLink(5)) { try socket.send([9, 9], link: 5) }
        socket.shutdown()
        socket.close()
        #expect(Self.isOpen(fd))
        #expect(Self.pending(stranger) == nil)  // neither data nor an end of stream
    }

    /// `shutdown` (disconnect, stop) wakes the blocked reader without closing under it; the
    /// reader leaves the table (`ended`) and only then closes.
    @Test func shutdownWakesTheReaderWhichAloneCloses() async throws {
        let (fd, peer) = try Self.socketPair()
        defer { Glibc.close(peer) }
        let socket = LinkSocket(FileDescriptor(rawValue: fd))
        let received = Mutex<[[UInt8]]>([])
        let endedWhileOpen = Mutex<Bool?>(nil)
        socket.readOnNewThread(
            data: { sdu in received.withLock { $0.append(sdu) } },
            ended: { endedWhileOpen.withLock { $0 = Self.isOpen(fd) } })
        #expect(send(peer, [UInt8]([7, 8, 9]), 3, 0) == 3)
        #expect(send(peer, [UInt8]([10]), 1, 0) == 1)
        let deadline = ContinuousClock.now + .seconds(30)
        while received.withLock({ $0.count }) < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(received.withLock { $0 } == [[7, 8, 9], [10]])
        try await Task.sleep(for: .milliseconds(20))  // the reader is blocked in read again
        #expect(Self.isOpen(fd))

        socket.shutdown()
        // Generous: a loaded CI machine may take its time to schedule the reader; only a reader
        // that never wakes fails.
        let closeDeadline = ContinuousClock.now + .seconds(30)
        while Self.isOpen(fd), ContinuousClock.now < closeDeadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(!Self.isOpen(fd))
        #expect(endedWhileOpen.withLock { $0 } == true)
        #expect(throws: BLEAdapterError.unknownLink(3)) { try socket.send([1], link: 3) }
    }
}

/// Issue 34, item 2: the thread that connects owns the socket until connect returns. Loopback TCP
/// stands in for L2CAP (a non-blocking connect is the same on both).
@Suite struct LinkSocketConnectTests {
    /// A loopback listener with room for `queue` waiting connections, and its port.
    static func listener(queue: Int32) throws -> (fd: Int32, port: UInt16) {
        let fd = tcpSocket()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, queue) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(status)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A listener whose accept queue is full: further connects stay in progress (their SYNs are
    /// dropped) until given up.
    static func fullListener() throws -> (fd: Int32, port: UInt16, fillers: [Int32]) {
        let (fd, port) = try listener(queue: 0)
        let fillers = (0..<4).map { _ in
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = connect(filler, port: port)
            return filler
        }
        usleep(100_000)
        return (fd, port, fillers)
    }

    static func connect(_ fd: Int32, port: UInt16) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    static func tcpSocket() -> Int32 { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }

    @Test func aConnectThatCompletesLeavesABlockingOpenSocket() throws {
        let (listener, port) = try Self.listener(queue: 4)
        defer { Glibc.close(listener) }
        let fd = Self.tcpSocket()
        let socket = LinkSocket(FileDescriptor(rawValue: fd), connecting: true)
        #expect(socket.connect { Self.connect($0, port: port) } == .connected)
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK == 0)
        try socket.send([1, 2, 3], link: 1)
        socket.close()
    }

    /// `shutdown` (a `disconnect`) while the connect is in progress: the owner gives up at its
    /// next look and the descriptor stays open for it to close; no other thread touched it.
    @Test(.timeLimit(.minutes(1))) func aDisconnectWhileConnectingMakesTheOwnerGiveUp() async throws {
        let (listener, port, fillers) = try Self.fullListener()
        defer { (fillers + [listener]).forEach { Glibc.close($0) } }
        let fd = Self.tcpSocket()
        let socket = LinkSocket(FileDescriptor(rawValue: fd), connecting: true)
        #expect(throws: BLEAdapterError.self) { try socket.send([1], link: 1) }
        let outcome = Mutex<LinkSocket.ConnectOutcome?>(nil)
        let thread = Thread {
            let result = socket.connect { Self.connect($0, port: port) }
            outcome.withLock { $0 = result }
        }
        thread.start()
        try await Task.sleep(for: .milliseconds(300))
        #expect(outcome.withLock { $0 } == nil, "the connect should still be in progress: the listener's queue is full")
        socket.shutdown()
        while outcome.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(outcome.withLock { $0 } == .gaveUp)
        #expect(LinkSocketTests.isOpen(fd))
        socket.close()
        #expect(!LinkSocketTests.isOpen(fd))
    }
}
