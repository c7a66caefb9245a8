import Glibc
import Synchronization
import SystemPackage

/// A byte stream on a file descriptor: a TCP socket (Google's pica, our world server: one
/// connection = one UWBS; the world's virtual air) or a tty (`/dev/ttyACM0`, a board's CDC-ACM
/// port through the kernel driver). UCI needs no framing beyond its own on either.
///
/// A dedicated thread polls the descriptor and feeds a `ByteQueue`, so the cooperative thread
/// pool never blocks on it; writes loop until every byte is sent. The descriptor is non-blocking
/// and every wait polls it beside an eventfd, so `close` wakes the reader and any writer; the
/// descriptor itself is closed once, by the last of them to let go (`ClosableDescriptor`).
///
/// Its `write`, `read` and `close` are exactly `UCITransport`'s requirements; UCIHost declares the
/// conformance, so this module knows nothing about UCI.
package final class StreamConnection: Sendable, CustomStringConvertible {
    private let descriptor: ClosableDescriptor
    private let isSocket: Bool
    private let incoming = ByteQueue()
    /// One writer at a time, so that two writes' partial sends never interleave.
    private let writing = Mutex(())
    package let description: String

    /// Connects to `host:port` (numeric or resolvable host).
    package static func connect(host: String, port: UInt16, loop: EventLoop? = nil) throws -> StreamConnection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw TransportError.system(
                call: "getaddrinfo(\(host))", errno: status, message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(result) }
        var lastErrno: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            if fd >= 0 {
                if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                    return try StreamConnection(fd: FileDescriptor(rawValue: fd), description: "tcp:\(host):\(port)", loop: loop).checked()
                }
                lastErrno = errno
                Glibc.close(fd)
            } else {
                lastErrno = errno
            }
            entry = info.pointee.ai_next
        }
        throw TransportError.system("connect(\(host):\(port))", errno: lastErrno)
    }

    /// Opens a serial device raw (no echo, no line discipline). Opening asserts DTR, which
    /// nRF52 CDC-ACM firmwares wait for before they send anything.
    package static func openTTY(_ path: String, loop: EventLoop? = nil) throws -> StreamConnection {
        let fd: FileDescriptor
        do {
            // O_NOCTTY: opening a tty must not make it this process's controlling terminal.
            fd = try FileDescriptor.open(path, .readWrite, options: [FileDescriptor.OpenOptions(rawValue: O_NOCTTY), .closeOnExec])
        } catch let error as Errno {
            throw TransportError.openDevice(path: path, errno: error.rawValue)
        }
        var settings = termios()
        if tcgetattr(fd.rawValue, &settings) == 0 {
            cfmakeraw(&settings)
            cfsetspeed(&settings, speed_t(B115200))
            tcsetattr(fd.rawValue, TCSANOW, &settings)
        }
        return try StreamConnection(fd: fd, description: path, isSocket: false, loop: loop).checked()
    }

    /// Wraps a connected socket (or, with `isSocket: false`, another stream descriptor), taking
    /// ownership of `fd`: it is closed after `close`, or when the connection is released. If
    /// the connection cannot be set up (no eventfd left), `fd` is closed at once and the
    /// connection is a closed one whose `read` throws why.
    ///
    /// With a `loop`, the loop's thread reads the descriptor (no thread of its own): a consumer
    /// whose executor is the same loop gets the bytes without a thread hand-off.
    package init(fd: FileDescriptor, description: String, isSocket: Bool = true, loop: EventLoop? = nil) {
        let descriptor = ClosableDescriptor(fd)
        self.descriptor = descriptor
        self.isSocket = isSocket
        self.description = description
        if let failure = descriptor.failure {
            incoming.finish(failure: failure)
            return
        }
        _ = fcntl(fd.rawValue, F_SETFL, fcntl(fd.rawValue, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        if isSocket { setsockopt(fd.rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        // The reader's use, taken before anyone can ask to close; given back when it stops, and
        // only then is the queue finished: a `read` that returns nil after `close` means the
        // reader let go of the descriptor.
        _ = descriptor.acquire()
        let incoming = self.incoming
        let buffer = ReadBuffer()
        guard let loop else {
            IOThread.detach(name: "stream-reader") {
                var failure: TransportError?
                while descriptor.wait(for: Int16(POLLIN)), Self.readAvailable(descriptor, into: incoming, using: buffer, failure: &failure) {}
                descriptor.release()
                incoming.finish(failure: failure)
            }
            return
        }
        let failure = Mutex<TransportError?>(nil)
        loop.watch(
            descriptor.fd.rawValue, endSignal: descriptor.wake.rawValue,
            readable: {
                failure.withLock { Self.readAvailable(descriptor, into: incoming, using: buffer, failure: &$0) } ? .keep : .end
            },
            ended: {
                descriptor.release()
                incoming.finish(failure: failure.withLock { $0 })
            })
    }

    /// The reader's buffer, allocated once: a read then costs no allocation, and a consumer
    /// that takes bytes on the reading thread (`deliverReads`) decodes them in place.
    private final class ReadBuffer: @unchecked Sendable {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 16_384, alignment: 16)
        deinit { bytes.deallocate() }
    }

    /// Reads what the non-blocking descriptor holds into `incoming`; false when the stream
    /// ended (end of file, a read error in `failure`, or a consumer that stopped taking bytes).
    /// Only the descriptor's one reader calls it, so `buffer` is never shared.
    private static func readAvailable(
        _ descriptor: ClosableDescriptor, into incoming: ByteQueue, using buffer: ReadBuffer, failure: inout TransportError?
    ) -> Bool {
        let bytes = buffer.bytes
        while true {
            let count: Int
            do {
                count = try descriptor.fd.read(into: bytes)
            } catch Errno.resourceTemporarilyUnavailable {
                return true
            } catch {
                failure = .system("read", error as? Errno ?? .ioError)
                return false
            }
            guard count > 0 else { return false }
            guard incoming.push(borrowing: UnsafeRawBufferPointer(rebasing: bytes[0..<count])) else { return false }
            if count < bytes.count { return true }
        }
    }

    /// Self, or the error that left it closed from the start.
    private func checked() throws(TransportError) -> StreamConnection {
        if let failure = descriptor.failure { throw failure }
        return self
    }

    /// `UCITransport`'s write: a UCI command is a few dozen bytes that a board's tty or socket
    /// takes at once, so this is `writeBlocking`: it blocks its thread only while the board does
    /// not read; the command's deadline fails the command meanwhile, and the thread waits until
    /// the board reads or the transport is closed.
    package func write(_ bytes: [UInt8]) async throws {
        try writeBlocking(bytes)
    }

    /// Writes all of `bytes`, blocking the calling thread while the peer does not take them
    /// (a full socket buffer); `close` ends the wait with `TransportError.closed`. For the world's
    /// device threads and adapters to a world server on this machine.
    package func writeBlocking(_ bytes: [UInt8]) throws {
        guard descriptor.acquire() else { throw TransportError.closed }
        defer { descriptor.release() }
        let fd = descriptor.fd
        try writing.withLock { _ throws(TransportError) in
            var offset = 0
            while offset < bytes.count {
                let sent: Int
                do {
                    sent = try bytes.withUnsafeBytes { raw in
                        let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                        // A socket's peer may be gone: send without SIGPIPE (swift-system has no send).
                        guard isSocket else { return try fd.write(rest) }
                        let sent = send(fd.rawValue, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
                        if sent < 0 { throw Errno(rawValue: errno) }
                        return sent
                    }
                } catch Errno.interrupted {
                    continue
                } catch Errno.resourceTemporarilyUnavailable {
                    guard descriptor.wait(for: Int16(POLLOUT)) else { throw .closed }
                    continue
                } catch {
                    throw .system(isSocket ? "send" : "write", error as? Errno ?? .ioError)
                }
                guard sent > 0 else { throw .system("send", Errno.ioError) }
                offset += sent
            }
        }
    }

    package func read() async throws -> [UInt8]? { try await incoming.next() }

    /// Hands every read's bytes to `receive` on the thread that reads the descriptor (the
    /// loop's, given one), instead of through `read`; always possible, so always true.
    package func deliverReads(to receive: @escaping ByteQueue.Receiver) -> Bool {
        incoming.deliver(to: receive)
        return true
    }

    /// Wakes the reader and any writer; the descriptor closes once they let go (at once if
    /// none holds it), and a pending `read` returns nil right after. A socket's peer is sent
    /// the end of the stream first.
    package func close() {
        if isSocket, descriptor.acquire() {
            shutdown(descriptor.fd.rawValue, Int32(SHUT_WR))
            descriptor.release()
        }
        descriptor.close()
    }

    deinit {
        close()
    }
}
