import BLE
import Glibc
import StreamIO
import Synchronization
import SystemPackage

/// One L2CAP channel's socket with a single owner: the link's reader, which alone closes it, once
/// its reads are over. Everyone else (a send, `disconnect`, `stop`) uses the descriptor only under
/// this record's lock and only while it is open, so no send can land on a descriptor number the
/// kernel has meanwhile handed to another file. Other threads end the link with `shutdown`, which
/// wakes the owner's blocking read (or connect); they never close it under the owner.
final class LinkSocket: Sendable {
    /// The descriptor while it is open; nil once the owner closed it.
    private let open: Mutex<FileDescriptor?>
    /// For the owner's own calls (connect, reads), which it makes before it closes.
    let ownerDescriptor: FileDescriptor

    /// Takes ownership of `fd`.
    init(_ fd: FileDescriptor) {
        ownerDescriptor = fd
        open = Mutex(fd)
    }

    /// Sends one SDU without blocking (one send is one SDU on a SOCK_SEQPACKET socket): a channel
    /// out of credits fails the send instead of stalling the caller.
    func send(_ sdu: [UInt8], link: LinkID) throws {
        try open.withLock { fd throws in
            guard let fd else { throw BLEAdapterError.unknownLink(link) }
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

    /// Ends the channel both ways, waking the owner's read or connect; the owner then closes.
    func shutdown() {
        open.withLock { fd in
            if let fd { _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_RDWR)) }
        }
    }

    /// Waits (blocking) until what was sent has left the socket, or until `deadline`: the
    /// channel's close would otherwise drop a frame sent just before it (a `goodbye` at
    /// shutdown, a `busy`) while it still waits for credits or the controller.
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
        open.withLock { fd in
            guard let fd else { return 0 }
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
        let fd = open.withLock { fd in
            defer { fd = nil }
            return fd
        }
        // Under no lock: once `open` is nil nobody else reaches the descriptor.
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
        var buffer = [UInt8](repeating: 0, count: Int(L2CAPSocket.receiveMTU))
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
