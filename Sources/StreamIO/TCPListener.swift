import Glibc
import SystemPackage

/// Accepts TCP connections on a dedicated thread.
package final class TCPListener: Sendable {
    private let descriptor: ClosableDescriptor
    package let port: UInt16

    /// Binds `host:port` (port 0 picks a free one, see `port`).
    package init(host: String, port: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Self.failure("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            Glibc.close(fd)
            throw TransportError.invalidEndpoint("\(host) (the world server listens on an IPv4 address)")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let error = Self.failure("bind/listen \(host):\(port)")
            Glibc.close(fd)
            throw error
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let descriptor = ClosableDescriptor(FileDescriptor(rawValue: fd))
        if let failure = descriptor.failure { throw failure }
        self.descriptor = descriptor
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    /// Calls `handler` on the accept thread for every new connection, until `close`; `failed`
    /// hears of the first of each run of `accept` errors (the loop goes on, see `AcceptLoop`).
    package func acceptLoop(failed: @escaping @Sendable (Errno) -> Void = { _ in }, _ handler: @escaping @Sendable (StreamConnection) -> Void) {
        let port = self.port
        guard descriptor.acquire() else { return }
        IOThread.detach(name: "tcp-accept") { [descriptor] in
            AcceptLoop.run(
                next: { () -> AcceptOutcome<Int32> in
                    guard descriptor.wait(for: Int16(POLLIN)) else { return .stopped }
                    let client = accept(descriptor.fd.rawValue, nil, nil)
                    return client >= 0 ? .accepted(client) : .failed(Errno(rawValue: errno))
                },
                report: { error, inARow, _ in if inARow == 1 { failed(error) } },
                accepted: { (client: Int32) in
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    handler(StreamConnection(fd: FileDescriptor(rawValue: client), description: "tcp-peer:\(port)"))
                })
            descriptor.release()
        }
    }

    /// Stops accepting; the listening socket closes once the accept thread lets go of it (at
    /// once when no accept loop runs).
    package func close() {
        descriptor.close()
    }

    private static func failure(_ call: String) -> TransportError {
        .system(call, errno: errno)
    }
}
