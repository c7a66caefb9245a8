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
