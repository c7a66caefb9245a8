import BLE
import BlueZMgmt
import CBlueZ
import Glibc
import StreamIO
import Synchronization
import SystemPackage

/// Why the BlueZ backend failed. Each case says what happened; what to do about it is
/// `Doctor.remedy(for:)`'s business, which switches on these cases.
package enum BlueZError: Error, Equatable, Sendable, CustomStringConvertible {
    /// socket(AF_BLUETOOTH) failed with `errno`.
    case noKernelSupport(errno: Int32)
    case noAdapter(requested: String, available: [String])
    /// The kernel answered `command` with a status other than success.
    case command(MgmtOpcode, MgmtStatus)
    case timeout(MgmtOpcode)
    /// The reply to `command` could not be decoded.
    case malformedReply(MgmtOpcode, MgmtError)
    case socket(call: String, errno: Int32)
    case unsupported(String)
    /// Binding the LE ATT channel (CID 4) on `adapter` failed with EADDRINUSE: another GATT server
    /// listens there.
    case attChannelInUse(adapter: String)

    package var description: String {
        switch self {
        case .noKernelSupport(let code): "this kernel has no Bluetooth support (socket(AF_BLUETOOTH): \(String(cString: strerror(code))))"
        case .noAdapter(let requested, let available):
            "no Bluetooth adapter \(requested)" + (available.isEmpty ? " (the kernel lists none)" : "; available: \(available.joined(separator: ", "))")
        case .command(let command, .permissionDenied):
            "\(command) was refused: the Bluetooth management channel needs CAP_NET_ADMIN, which this process lacks"
        case .command(let command, .rfkilled): "\(command) failed: the adapter is blocked by rfkill"
        case .command(let command, .busy) where command == .startDiscovery || command == .stopDiscovery:
            "\(command) failed: the adapter is busy discovering for another program"
        case .command(let command, .notPowered): "\(command) failed: the adapter is powered off and could not be powered on"
        case .command(let command, let status): "\(command) failed: \(status)"
        case .timeout(let command): "the kernel did not answer \(command)"
        case .malformedReply(let command, let error): "unreadable reply to \(command): \(error)"
        case .socket(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .unsupported(let what): what
        case .attChannelInUse(let adapter):
            "another GATT server (bluetoothd) holds the LE ATT channel on \(adapter); where bluetoothd runs, the D-Bus GATT backend is the one to use"
        }
    }
}

/// The kernel's Bluetooth management channel (HCI_CHANNEL_CONTROL): the interface bluetoothd
/// itself uses, shared by any number of clients. Its own `EventLoop` reads every packet; replies
/// resolve the waiting command and events go to the handler, so no event is dropped while a
/// command is in flight. The same loop times commands out: one thread, as a reader alone was.
final class MgmtSocket: Sendable {
    private typealias Reply = ReplySlot<(MgmtStatus, [UInt8]), BlueZError>

    private struct Pending {
        var opcode: UInt16
        var index: UInt16
        var reply: Reply
        /// The command has been written: only a reply read after that can be its own.
        var written = false
    }

    private struct State {
        var pending: Pending?
        /// Why the reading stopped (closed, or the socket failed), or that the client finishes:
        /// later commands fail at once.
        var stopped: BlueZError?
        /// `finish`'s commands not answered yet, whether one was, and what waits for their
        /// answers (and for the command in flight's).
        var finishing: [(opcode: UInt16, index: UInt16)] = []
        var cleanUpAnswered = false
        var finished: ReplySlot<Void, Never>?
        /// The command in flight was answered after part of the clean-up: it may have undone it.
        var undone = false
        /// The reading ended: nothing more is written.
        var ended = false
    }

    private let descriptor: ClosableDescriptor
    private let loop: EventLoop
    private let state = Mutex(State())
    /// One mgmt command at a time from this process: replies carry only the opcode and index, so
    /// two identical commands in flight could not be told apart.
    private let commandSlot = WaiterList(false) { inFlight in !inFlight }
    private let handler = CallbackSlot<(UInt16, MgmtEvent)>()

    convenience init() throws(BlueZError) {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw .noKernelSupport(errno: errno) }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_CONTROL)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .socket(call: "bind(HCI_CHANNEL_CONTROL)", errno: code)
        }
        self.init(FileDescriptor(rawValue: fd))
    }

    /// Takes over `fd`: a bound management socket, or a datagram socket standing in for one.
    init(_ fd: FileDescriptor) {
        descriptor = ClosableDescriptor(fd)
        loop = EventLoop(name: "bt-mgmt")
        // The reader's use, given back when the watch ends: `close` never closes the descriptor
        // under the loop.
        guard descriptor.acquire() else {
            var code = EBADF
            if case .system(_, let failure, _) = descriptor.failure { code = failure }
            stop(with: .socket(call: "eventfd", errno: code))
            return
        }
        let reading = Mutex<BlueZError?>(nil)
        loop.watch(
            fd.rawValue, endSignal: descriptor.wake.rawValue,
            readable: { [self] in
                reading.withLock { readAvailable(failure: &$0) } ? .keep : .end
            },
            ended: { [self] in
                descriptor.release()
                stop(with: reading.withLock { $0 } ?? .socket(call: "read(mgmt)", errno: EBADF))
            })
    }

    func onEvent(_ handler: @escaping @Sendable (UInt16, MgmtEvent) -> Void) {
        self.handler.install { handler($0.0, $0.1) }
    }

    /// Sends `command` to controller `index` and returns its reply's return parameters.
    func send(_ command: MgmtCommand, index: UInt16, timeout: Duration = .seconds(5)) async throws(BlueZError) -> [UInt8] {
        await commandSlot.wait { $0 = true }
        defer { commandSlot.update { $0 = false } }
        // Installed before writing: the reply may be read before the write returns.
        let reply = Reply()
        let stopped = state.withLock { s -> BlueZError? in
            if s.stopped == nil { s.pending = Pending(opcode: command.opcode, index: index, reply: reply) }
            return s.stopped
        }
        if let stopped { throw stopped }
        let timer = loop.schedule(at: ContinuousClock.now + timeout) { reply.resume(with: .failure(.timeout(command.code))) }
        let bytes = command.packet(index: index).encoded()
        // Written from the loop's thread once it has handled what it had received: a reply
        // already waiting there (the late answer of an earlier command that timed out, with the
        // same opcode) came before this command and must not answer it.
        _ = loop.schedule(at: .now) { [self] in
            guard descriptor.acquire() else { return }  // closed: `stop` failed the command
            defer { descriptor.release() }
            var unread: BlueZError?
            _ = readAvailable(failure: &unread)  // a failure ends the watch at its next wake-up
            state.withLock { s in if s.pending?.reply === reply { s.pending?.written = true } }
            if let error = write(bytes) { reply.resume(with: .failure(error)) }
        }
        let result = await reply.result
        loop.cancel(timer)
        state.withLock { s in if s.pending?.reply === reply { s.pending = nil } }
        let (status, parameters) = try result.get()
        guard status == .success else { throw .command(command.code, status) }
        return parameters
    }

    private func write(_ bytes: [UInt8]) -> BlueZError? {
        guard descriptor.acquire() else { return .socket(call: "write(mgmt)", errno: EBADF) }
        defer { descriptor.release() }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor.fd.rawValue, $0.baseAddress, $0.count) }
        return written == bytes.count ? nil : .socket(call: "write(mgmt)", errno: written < 0 ? errno : EMSGSIZE)
    }

    /// Reading stopped: the command waiting fails with `error`, and so does every later one.
    private func stop(with error: BlueZError) {
        let (waiting, finished) = state.withLock { s in
            if s.stopped == nil { s.stopped = error }
            s.ended = true
            defer {
                s.pending = nil
                s.finished = nil
            }
            return (s.pending, s.finished)
        }
        waiting?.reply.resume(with: .failure(error))
        finished?.resume(with: .success(()))
        loop.shutdown()
    }

    private func resolve(opcode: UInt16, index: UInt16, with result: (MgmtStatus, [UInt8])) {
        let (waiting, finished) = state.withLock { s -> (Pending?, ReplySlot<Void, Never>?) in
            var waiting: Pending?
            if let pending = s.pending, pending.written, pending.opcode == opcode, pending.index == index {
                s.pending = nil
                waiting = pending
                if s.finished != nil && s.cleanUpAnswered { s.undone = true }
            } else if let answered = s.finishing.firstIndex(where: { $0.opcode == opcode && $0.index == index }) {
                s.finishing.remove(at: answered)
                s.cleanUpAnswered = true
            }
            guard s.finished != nil, s.finishing.isEmpty, s.pending == nil else { return (waiting, nil) }
            defer { s.finished = nil }
            return (waiting, s.finished)
        }
        waiting?.reply.resume(with: .success(result))
        finished?.resume(with: .success(()))
    }

    /// Handles every datagram waiting (the descriptor stays blocking for writes; reads don't
    /// wait); false when the socket ended or failed, with why in `failure`.
    private func readAvailable(failure: inout BlueZError?) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) { buffer in
            while true {
                let count = recv(descriptor.fd.rawValue, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                if count < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK { return true }
                    failure = .socket(call: "read(mgmt)", errno: errno)
                    return false
                }
                guard count > 0 else {
                    failure = .socket(call: "read(mgmt)", errno: ECONNRESET)
                    return false
                }
                handle(Array(buffer[0..<count]))
            }
        }
    }

    private func handle(_ datagram: [UInt8]) {
        guard let packet = try? MgmtPacket(datagram: datagram), let event = try? MgmtEvent(packet) else { return }
        switch event {
        case .commandComplete(let opcode, let status, let parameters):
            resolve(opcode: opcode, index: packet.index, with: (status, parameters))
        case .commandStatus(let opcode, let status):
            resolve(opcode: opcode, index: packet.index, with: (status, []))
        default:
            handler((packet.index, event))
        }
    }

    /// A client's last commands as it stops (its clean-up), then the close. They are written at
    /// once, in order, behind only what was written already; commands still waiting for their
    /// turn fail instead. Their answers, and the command in flight's, are waited for until
    /// `deadline` at most (the kernel's answers queue behind slow HCI work, such as a connection
    /// being set up); then the socket closes, failing what is still in flight.
    ///
    /// Why not `send` them: a rig whose Stop Discovery waited its turn behind an unanswered
    /// command until the deadline never sent it, and left the kernel discovering for another
    /// 10 s (CI, two-rigs `btd-first`, 2026-12-03). And a command in flight that the kernel
    /// answers only after part of the clean-up may have undone it: a Start Discovery not yet
    /// started makes the kernel refuse Stop Discovery (Rejected: nothing to stop), then starts.
    /// So the clean-up is written once more after it.
    ///
    /// Returns whether the kernel answered the whole clean-up (its last round), and the command
    /// that was in flight, before the close.
    @discardableResult
    func finish(with commands: [MgmtCommand], index: UInt16, deadline: ContinuousClock.Instant) async -> Bool {
        let packets = commands.map { $0.packet(index: index).encoded() }
        for round in 1...2 {
            let finished = ReplySlot<Void, Never>()
            let go = state.withLock { s -> Bool in
                guard !commands.isEmpty, !s.ended, round == 1 ? s.stopped == nil : s.undone else { return false }
                s.stopped = .socket(call: "write(mgmt)", errno: ESHUTDOWN)
                s.finishing = commands.map { ($0.opcode, index) }
                s.cleanUpAnswered = false
                s.undone = false
                s.finished = finished
                return true
            }
            guard go else { break }
            // On the loop's thread, after the write of a command already let through, and before
            // the deadline's end even when the deadline has passed already (a stalled process):
            // timers due at the same instant run in the order they were scheduled.
            let now = ContinuousClock.now
            _ = loop.schedule(at: now) { [self] in
                for bytes in packets where write(bytes) != nil {
                    finished.resume(with: .success(()))
                    return
                }
            }
            let timer = loop.schedule(at: max(deadline, now)) { finished.resume(with: .success(())) }
            _ = await finished.result
            loop.cancel(timer)
        }
        let answered = commands.isEmpty || state.withLock { $0.finishing.isEmpty && !$0.undone && $0.pending == nil }
        close()
        await loop.waitUntilEnded()  // the descriptor is closed once the loop has let it go
        return answered
    }

    /// Ends the reading (the loop lets the descriptor go, which closes it) and the loop's thread;
    /// a command waiting fails.
    func close() {
        descriptor.close()
        loop.shutdown()
    }
}
