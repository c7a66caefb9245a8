import BlueZMgmt
import Foundation
import Glibc
import Synchronization
import SystemPackage
import Testing

@testable import BLEBlueZ

/// The management socket against a stand-in kernel: an AF_UNIX SOCK_SEQPACKET pair keeps the
/// mgmt channel's one-packet-per-datagram semantics, no Bluetooth needed.
@Suite(.timeLimit(.minutes(1))) struct MgmtSocketTests {
    /// The kernel's end of the pair.
    struct Kernel {
        let fd: Int32

        /// The next command packet the socket wrote, read on a thread of its own: a blocking
        /// read on the test's would hold up the tasks that write it.
        func nextCommand() async throws -> MgmtPacket {
            let fd = self.fd
            let datagram = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    var buffer = [UInt8](repeating: 0, count: 512)
                    let count = recv(fd, &buffer, buffer.count, 0)
                    continuation.resume(returning: Array(buffer[0..<max(count, 0)]))
                }
            }
            return try MgmtPacket(datagram: datagram)
        }

        func send(_ packet: MgmtPacket) {
            let bytes = packet.encoded()
            #expect(Glibc.send(fd, bytes, bytes.count, 0) == bytes.count)
        }

        /// MGMT_EV_CMD_COMPLETE for `opcode` on controller `index`.
        func complete(_ opcode: MgmtOpcode, index: UInt16 = 0, status: MgmtStatus = .success, _ parameters: [UInt8] = []) {
            send(Self.completion(opcode, index: index, status: status, parameters))
        }

        /// `complete` racing the socket's close: sent if the socket is still open.
        func completeIfOpen(_ opcode: MgmtOpcode, status: MgmtStatus = .success, _ parameters: [UInt8] = []) {
            let bytes = Self.completion(opcode, index: 0, status: status, parameters).encoded()
            _ = Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL))
        }

        static func completion(_ opcode: MgmtOpcode, index: UInt16, status: MgmtStatus, _ parameters: [UInt8]) -> MgmtPacket {
            MgmtPacket(code: 0x0001, index: index, parameters: [UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), status.rawValue] + parameters)
        }

        /// Whether the socket's end is closed: recv sees the end of the stream.
        var peerClosed: Bool {
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == 0
        }
    }

    static func socket() throws -> (MgmtSocket, Kernel) {
        var pair: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        return (MgmtSocket(FileDescriptor(rawValue: pair[0])), Kernel(fd: pair[1]))
    }

    /// A command gets its own reply; an event arriving while it waits goes to the handler.
    @Test func aCommandGetsItsReplyAndEventsGoToTheHandler() async throws {
        let (socket, kernel) = try Self.socket()
        defer { socket.close(); Glibc.close(kernel.fd) }
        let events = Mutex<[MgmtEvent]>([])
        socket.onEvent { _, event in events.withLock { $0.append(event) } }
        async let version = socket.send(.readVersion, index: MgmtPacket.noController)
        let command = try await kernel.nextCommand()
        #expect(command.code == MgmtOpcode.readVersion.rawValue)
        #expect(command.index == MgmtPacket.noController)
        kernel.send(MgmtPacket(code: 0x0013, index: 0, parameters: [0x06, 0x00]))  // discovering, off
        kernel.complete(.readVersion, index: MgmtPacket.noController, [0x01, 0x16, 0x00])
        #expect(try await version == [0x01, 0x16, 0x00])
        #expect(events.withLock { $0 } == [.discovering(addressTypes: 6, active: false)])
    }

    /// A refusal is the command's error.
    @Test func aRefusalIsTheCommandsError() async throws {
        let (socket, kernel) = try Self.socket()
        defer { socket.close(); Glibc.close(kernel.fd) }
        let powered = Task { try await socket.send(.setPowered(true), index: 0) }
        _ = try await kernel.nextCommand()
        kernel.complete(.setPowered, status: .rfkilled)
        await #expect(throws: BlueZError.command(.setPowered, .rfkilled)) { try await powered.value }
    }

    /// Unanswered, a command times out on the socket's deadline; its late reply answers nothing,
    /// and the next command gets its own.
    @Test func anUnansweredCommandTimesOutAndItsLateReplyAnswersNothing() async throws {
        let (socket, kernel) = try Self.socket()
        defer { socket.close(); Glibc.close(kernel.fd) }
        await #expect(throws: BlueZError.timeout(.setPowered)) {
            try await socket.send(.setPowered(true), index: 0, timeout: .milliseconds(20))
        }
        _ = try await kernel.nextCommand()
        kernel.complete(.setPowered, [0xAA])  // late
        async let powered = socket.send(.setPowered(true), index: 0)
        _ = try await kernel.nextCommand()
        kernel.complete(.setPowered, [0xBB])
        #expect(try await powered == [0xBB])
    }

    /// Closing fails the command waiting at once (no waiting out its timeout), closes the
    /// descriptor once the reader let go of it, and fails later commands.
    @Test func closingFailsTheWaitingCommandAndClosesTheDescriptor() async throws {
        let (socket, kernel) = try Self.socket()
        defer { Glibc.close(kernel.fd) }
        let waiting = Task { try await socket.send(.setPowered(true), index: 0, timeout: .seconds(3600)) }
        _ = try await kernel.nextCommand()
        socket.close()
        await #expect(throws: BlueZError.socket(call: "read(mgmt)", errno: EBADF)) { try await waiting.value }
        #expect(kernel.peerClosed)
        await #expect(throws: BlueZError.self) { try await socket.send(.readVersion, index: 0) }
    }

    /// The clean-up of these tests, as `BlueZAdapter.stop` sends it.
    static let cleanUp: [MgmtCommand] = [.removeAdvertising(instance: 5), .stopDiscovery(addressTypes: 0x06)]

    /// A Start Discovery the kernel has not answered yet, then `finish` with `cleanUp` (until
    /// `deadline`) and any `waitingItsTurn` command sent between the two.
    static func finishing(
        deadline: ContinuousClock.Instant, waitingItsTurn: MgmtCommand? = nil
    ) async throws -> (kernel: Kernel, inFlight: Task<[UInt8], any Error>, waitingItsTurn: Task<[UInt8], any Error>?, finished: Task<Bool, Never>) {
        let (socket, kernel) = try Self.socket()
        let inFlight = Task { try await socket.send(.startDiscovery(addressTypes: 0x06), index: 0, timeout: .seconds(3600)) }
        #expect(try await kernel.nextCommand().code == MgmtOpcode.startDiscovery.rawValue)
        let waiting = waitingItsTurn.map { command in Task { try await socket.send(command, index: 0, timeout: .seconds(3600)) } }
        let finished = Task { await socket.finish(with: cleanUp, index: 0, deadline: deadline) }
        return (kernel, inFlight, waiting, finished)
    }

    /// The next two commands are the clean-up.
    static func expectCleanUp(from kernel: Kernel) async throws {
        let commands = [try await kernel.nextCommand(), try await kernel.nextCommand()]
        #expect(commands.map(\.code) == [MgmtOpcode.removeAdvertising.rawValue, MgmtOpcode.stopDiscovery.rawValue])
        #expect(commands.map(\.parameters) == [[5], [0x06]])
    }

    /// A client that stops writes its clean-up at once, behind the command in flight but not
    /// behind the one waiting for its turn (which fails unwritten), and gives the kernel until
    /// the deadline to answer: then the command in flight fails and the socket closes.
    @Test func finishingWritesTheCleanUpAtOnceAndClosesAtTheDeadline() async throws {
        let (kernel, inFlight, waitingItsTurn, finished) = try await Self.finishing(deadline: .now + .milliseconds(300), waitingItsTurn: .setPowered(true))
        defer { Glibc.close(kernel.fd) }
        // Written while Start Discovery is still unanswered (they waited for it before).
        try await Self.expectCleanUp(from: kernel)
        #expect(await finished.value == false)  // nothing answered
        await #expect(throws: BlueZError.socket(call: "read(mgmt)", errno: EBADF)) { try await inFlight.value }
        await #expect(throws: BlueZError.socket(call: "write(mgmt)", errno: ESHUTDOWN)) { try await waitingItsTurn!.value }
        // Closed, and nothing after the clean-up: Set Powered was never written.
        #expect(kernel.peerClosed)
    }

    /// A deadline already past when the client finishes (a process stalled for seconds, or a
    /// task waiting that long for a thread: seen in CI, every test of a run 20 s late) still lets
    /// the clean-up out before the close.
    @Test func aDeadlinePassedAlreadyStillLetsTheCleanUpOutFirst() async throws {
        let (kernel, inFlight, _, finished) = try await Self.finishing(deadline: .now - .seconds(1))
        defer { Glibc.close(kernel.fd) }
        try await Self.expectCleanUp(from: kernel)
        #expect(await finished.value == false)
        await #expect(throws: BlueZError.socket(call: "read(mgmt)", errno: EBADF)) { try await inFlight.value }
        #expect(kernel.peerClosed)
    }

    /// The clean-up's answers end the wait: no deadline of an hour is waited out.
    @Test func finishingEndsWhenTheCleanUpIsAnswered() async throws {
        let (socket, kernel) = try Self.socket()
        defer { Glibc.close(kernel.fd) }
        let finished = Task { await socket.finish(with: Self.cleanUp, index: 0, deadline: .now + .seconds(3600)) }
        try await Self.expectCleanUp(from: kernel)
        kernel.complete(.removeAdvertising, [5])
        kernel.complete(.stopDiscovery, [0x06])
        #expect(await finished.value)
        #expect(kernel.peerClosed)
        await #expect(throws: BlueZError.self) { try await socket.send(.readVersion, index: 0) }
    }

    /// The kernel refuses Stop Discovery while a Start Discovery it has not started yet is in
    /// flight (Rejected: nothing to stop; net/bluetooth/mgmt.c `stop_discovery`), then starts
    /// discovering: a command in flight answered after part of the clean-up gets it once more.
    @Test func aCommandInFlightAnsweredAfterTheCleanUpGetsTheCleanUpAgain() async throws {
        let (kernel, inFlight, _, finished) = try await Self.finishing(deadline: .now + .seconds(3600))
        defer { Glibc.close(kernel.fd) }
        try await Self.expectCleanUp(from: kernel)
        kernel.complete(.stopDiscovery, status: .rejected, [0x06])
        kernel.complete(.removeAdvertising, [5])
        kernel.complete(.startDiscovery, [0x06])
        #expect(try await inFlight.value == [0x06])
        try await Self.expectCleanUp(from: kernel)
        kernel.complete(.removeAdvertising, status: .invalidParameters, [5])
        kernel.complete(.stopDiscovery, [0x06])
        #expect(await finished.value)
        #expect(kernel.peerClosed)  // and no third round
    }

    /// A command in flight answered before any of the clean-up changes nothing: one round.
    @Test func aCommandInFlightAnsweredFirstNeedsNoSecondRound() async throws {
        let (kernel, inFlight, _, finished) = try await Self.finishing(deadline: .now + .seconds(3600))
        defer { Glibc.close(kernel.fd) }
        try await Self.expectCleanUp(from: kernel)
        kernel.complete(.startDiscovery, [0x06])
        kernel.complete(.removeAdvertising, [5])
        kernel.complete(.stopDiscovery, [0x06])
        _ = try await inFlight.value
        #expect(await finished.value)
        #expect(kernel.peerClosed)
    }

    /// The clean-up answered (Stop Discovery refused: the start in flight has not started yet)
    /// but that start unanswered at the deadline: the kernel may start discovering after the
    /// close, and `finish` says the clean-up did not complete (the adapter warns).
    ///
    /// The answers race the deadline: when this test waits past it for a thread of the
    /// cooperative pool (CI, 2026-12-03: the pool held by CPU-bound tests, every test of the run
    /// 19 s late) the socket has closed before they go, and `finish` still says not clean; only
    /// a `finish` that ignored the start in flight fails, whenever it runs.
    @Test func aStartStillInFlightAtTheDeadlineIsNoCleanStop() async throws {
        let (kernel, inFlight, _, finished) = try await Self.finishing(deadline: .now + .milliseconds(300))
        defer { Glibc.close(kernel.fd) }
        try await Self.expectCleanUp(from: kernel)
        kernel.completeIfOpen(.removeAdvertising, [5])
        kernel.completeIfOpen(.stopDiscovery, status: .rejected, [0x06])
        #expect(await finished.value == false)
        await #expect(throws: BlueZError.self) { try await inFlight.value }
    }
}
