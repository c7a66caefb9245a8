import BLE
import CBlueZ
import Glibc
import StreamIO
import Synchronization
import SystemPackage

/// One L2CAP channel's socket with a single owner: the thread that connects it, then the link's
/// reader, which alone closes it, once its reads are over. Everyone else (a send, `disconnect`,
/// `stop`) uses the descriptor only under this record's lock and only while it is open, so no
/// send can land on a descriptor number the kernel has meanwhile handed to another file. Other
/// threads end the link with `shutdown`, which wakes the owner's blocking read; they never close
/// it under the owner. While the socket is still connecting, `shutdown` only asks the owner to
/// give up, so that only one thread ever touches a connecting socket. A given-up connect is
/// closed at once, not waited out: on Debian's 6.1.192 kernel that close can meet the kernel's
/// `hci_chan_del` BUG, which waiting until the kernel ends the connect avoids, but a connect held
/// for up to the kernel's 40 s keeps its LE connection creation going, and in the VM rig that
/// kept the discovery watchdog from curing a wedged discovery (Tests/VMRig/README.md, "Kernel
/// bug seen").
final class LinkSocket: Sendable {
    private struct State {
        /// The descriptor while it is open; nil once the owner closed it.
        var fd: FileDescriptor?
        var connecting: Bool
        var giveUp = false
        var shutDown = false
    }
    private let state: Mutex<State>
    /// For the owner's own calls (connect, reads), which it makes before it closes.
    let ownerDescriptor: FileDescriptor

    /// Takes ownership of `fd`: a channel that is open (accepted), or one the owner is about to
    /// `connect`.
    init(_ fd: FileDescriptor, connecting: Bool = false) {
        ownerDescriptor = fd
        state = Mutex(State(fd: fd, connecting: connecting))
    }

    enum ConnectOutcome: Equatable {
        case connected
        /// `shutdown` was called while it connected.
        case gaveUp
        case failed(errno: Int32)
    }

    /// How often a connecting owner looks whether it should give up.
    static let connectPollMilliseconds: Int32 = 50

    /// The owner's connect: `start` makes the connect(2) call on the socket, non-blocking, and
    /// the owner waits for its end in slices, giving up when `shutdown` asks. The socket is
    /// blocking again afterwards (the reader's reads wait).
    func connect(start: (Int32) -> Int32) -> ConnectOutcome {
        let fd = ownerDescriptor.rawValue
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(fd, F_SETFL, flags) }
        var outcome: ConnectOutcome?
        if start(fd) == 0 {
            outcome = .connected
        } else if errno != EINPROGRESS {
            outcome = .failed(errno: errno)
        }
        while outcome == nil {
            var request = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&request, 1, Self.connectPollMilliseconds)
            if ready < 0, errno != EINTR {
                outcome = .failed(errno: errno)
            } else if ready > 0 {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                outcome = error == 0 ? .connected : .failed(errno: error)
            } else if state.withLock({ $0.giveUp }) {
                outcome = .gaveUp
            }
        }
        return state.withLock { s in
            s.connecting = false
            return s.giveUp ? .gaveUp : outcome!
        }
    }

    /// Sends one SDU without blocking (one send is one SDU on a SOCK_SEQPACKET socket): a channel
    /// out of credits fails the send instead of stalling the caller.
    func send(_ sdu: [UInt8], link: LinkID) throws {
        try state.withLock { s throws in
            guard let fd = s.fd, !s.connecting else { throw BLEAdapterError.unknownLink(link) }
            let written = sdu.withUnsafeBytes { bytes in
                valueOrErrno(retryOnInterrupt: true) {
                    Glibc.send(fd.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
            }
            switch written {
            case .success(let count) where count == sdu.count: return
            case .success: throw BlueZError.socket(call: "send(L2CAP)", errno: EMSGSIZE)
            case .failure(let error): throw BlueZError.socket(call: "send(L2CAP)", errno: error.rawValue)
            }
        }
    }

    /// Ends the channel both ways, waking the owner's read, or asks a connecting owner to give
    /// up; the owner then closes.
    func shutdown() {
        state.withLock { s in
            s.shutDown = true
            if s.connecting {
                s.giveUp = true
            } else if let fd = s.fd {
                _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_RDWR))
            }
        }
    }

    /// `shutdown` was called: a listener's failed `accept` means it is over, not an error.
    var wasShutDown: Bool { state.withLock { $0.shutDown } }

    /// Waits (blocking) until what was sent has left the socket, or until `deadline`: the
    /// channel's close would otherwise drop a frame sent just before it (a `goodbye` at
    /// shutdown, a `busy`) while it still waits for credits or the controller.
    ///
    /// Polled, because nothing else tells: POLLOUT means room in the send buffer (half of it
    /// free), not an empty one; an LE credit-based channel's shutdown waits for no
    /// acknowledgement (only ERTM's does), and SO_LINGER waits for the disconnection, not for
    /// the queue. Every 5 ms is far below the time a frame waits for credits.
    func waitUntilSent(deadline: ContinuousClock.Instant) {
        while ContinuousClock.now < deadline, unsentBytes() > 0 { usleep(5_000) }
    }

    /// `shutdown` once what was sent has left, at most `limit` later, on a thread of its own.
    func shutdownWhenSent(within limit: Duration) {
        let deadline = ContinuousClock.now + limit
        IOThread.detach(name: "l2cap-drain") { [self] in
            waitUntilSent(deadline: deadline)
            shutdown()
        }
    }

    /// Bytes still charged to the socket's send buffer (queued for credits or the controller);
    /// 0 once closed, or when the kernel cannot say. A Bluetooth socket's TIOCOUTQ is the free
    /// space (af_bluetooth.c: sk_sndbuf - sk_wmem_alloc), so the queue is SO_SNDBUF less that.
    func unsentBytes() -> Int {
        state.withLock { s in
            guard let fd = s.fd, !s.connecting else { return 0 }
            var space: Int32 = 0
            var buffer: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard ioctl(fd.rawValue, UInt(TIOCOUTQ), &space) == 0,
                getsockopt(fd.rawValue, SOL_SOCKET, SO_SNDBUF, &buffer, &length) == 0
            else { return 0 }
            return max(0, Int(buffer) - Int(space))
        }
    }

    /// The owner's last call, after its last read.
    func close() {
        let fd = state.withLock { s in
            defer { s.fd = nil }
            return s.fd
        }
        // Under no lock: once `fd` is nil nobody else reaches the descriptor.
        try? fd?.close()
    }

    /// Reads SDUs on a new thread, handing each to `data`, until the channel ends (EOF, an error,
    /// `shutdown`); then calls `ended` and closes the socket. The calling thread owns the socket
    /// and hands it on to the reader.
    func readOnNewThread(data: @escaping @Sendable ([UInt8]) -> Void, ended: @escaping @Sendable () -> Void) {
        IOThread.detach(name: "l2cap-link") { [self] in
            readUntilEnd(data: data)
            ended()
            close()
        }
    }

    /// The owner's read loop: returns when the channel ended. A peer that closes the channel
    /// right after its last SDU (a goodbye) can make the kernel report the end first: the
    /// disconnection sets the socket's error (ECONNRESET), a read takes a pending error before
    /// the SDUs still queued, and a shut-down Bluetooth socket answers it as end of file
    /// (bt_sock_recvmsg). So after the end or an error the queue is read out, without waiting.
    func readUntilEnd(data: ([UInt8]) -> Void) {
        var buffer = [UInt8](repeating: 0, count: Int(LEChannelParameters.receiveMTU))
        var waiting = true
        while true {
            let flags = waiting ? 0 : Int32(MSG_DONTWAIT)
            let received = buffer.withUnsafeMutableBytes { bytes in
                valueOrErrno(retryOnInterrupt: true) { Glibc.recv(ownerDescriptor.rawValue, bytes.baseAddress, bytes.count, flags) }
            }
            if case .success(let count) = received, count > 0 {
                data(Array(buffer[0..<count]))
            } else if waiting {
                waiting = false
            } else {
                return
            }
        }
    }
}

/// The result of a system call that returns -1 and sets errno on failure.
private func valueOrErrno(retryOnInterrupt: Bool, _ call: () -> Int) -> Result<Int, Errno> {
    while true {
        let value = call()
        if value >= 0 { return .success(value) }
        let error = Errno(rawValue: errno)
        if retryOnInterrupt, error == .interrupted { continue }
        return .failure(error)
    }
}
