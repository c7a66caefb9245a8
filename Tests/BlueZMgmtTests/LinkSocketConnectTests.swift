import BLE
import Foundation
import Glibc
import Synchronization
import SystemPackage
import Testing
@testable import BLEBlueZ

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
