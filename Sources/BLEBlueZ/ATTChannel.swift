import CBlueZ
import GATTServer
import Glibc
import Synchronization
import SystemPackage

/// One client's ATT bearer served by its own `ATTServer`: the kernel-socket GATT backend's link.
/// It needs only a SOCK_SEQPACKET descriptor, where one read is one PDU (the LE ATT channel's
/// socket on a rig, a socketpair in the tests), so everything here but the kernel's accept is
/// tested without Bluetooth.
///
/// Ownership as `LinkSocket`'s: the thread in `serve` owns the descriptor and alone closes it,
/// once its reads are over; others (`notify`, `shutdown`) use it only under the lock while it
/// is open. The server's state is under the same lock, because a notification depends on the
/// client's subscription and ATT_MTU, which the owner's PDUs change.
package final class ATTChannel: Sendable {
    private struct State {
        /// The descriptor while it is open; nil once the owner closed it.
        var fd: FileDescriptor?
        var server: ATTServer
    }
    private let state: Mutex<State>
    private let ownerDescriptor: FileDescriptor
    /// The client's name for the node (`ATTListener` numbers its links).
    package let client: GATTClient

    /// Takes ownership of `fd`, an open SOCK_SEQPACKET channel to `client`.
    package init(_ fd: FileDescriptor, database: GATTDatabase, client: GATTClient = GATTClient("att")) {
        ownerDescriptor = fd
        self.client = client
        state = Mutex(State(fd: fd, server: ATTServer(database: database)))
    }

    /// ATT_MTU as the client and server agreed it (23 before an exchange).
    package var mtu: Int { state.withLock { $0.server.mtu } }

    /// The owner's loop, on a thread that may block: reads the client's PDUs, answers each as the
    /// server decides and hands `client` the rest of what the server reports (writes,
    /// subscriptions), in order, until the channel ends (end of file, an error, `shutdown`).
    /// Then it closes the descriptor. A zero-length read is the end: no ATT PDU is empty.
    package func serve(_ client: (ATTServerAction) -> Void) {
        // ATT_MTU + 1 octets at most: enough for the server to see that a PDU is longer than
        // ATT_MTU (and refuse it), while the socket drops the rest of such a PDU.
        var buffer = [UInt8](repeating: 0, count: ATTServer.maximumMTU + 1)
        serving: while let count = Self.receive(ownerDescriptor, into: &buffer, limit: mtu + 1) {
            let encrypted = Self.isEncrypted(ownerDescriptor)
            let actions = state.withLock { s in
                s.server.linkEncrypted = encrypted
                return s.server.handle(Array(buffer[0..<count]))
            }
            for action in actions {
                guard case .send(let pdu) = action else {
                    client(action)
                    continue
                }
                // Blocking: an answer waits for room rather than being lost.
                guard Self.send(pdu, on: ownerDescriptor, flags: 0) == nil else { break serving }
            }
        }
        let fd = state.withLock { s in
            defer { s.fd = nil }
            return s.fd
        }
        // Under no lock: once `fd` is nil nobody else reaches the descriptor.
        try? fd?.close()
    }

    /// Sends `value` as a Handle Value Notification on `characteristic`, without blocking: throws
    /// `ATTNotificationError` when the server may not send it, `BlueZError` when the socket
    /// refuses it (closed, or full).
    package func notify(_ characteristic: GATTUUID, value: [UInt8]) throws {
        try state.withLock { s throws in
            guard let fd = s.fd else { throw BlueZError.socket(call: "send(ATT)", errno: ENOTCONN) }
            let pdu = try s.server.notification(characteristic, value: value)
            if let code = Self.send(pdu, on: fd, flags: Int32(MSG_DONTWAIT)) { throw BlueZError.socket(call: "send(ATT)", errno: code) }
        }
    }

    /// Ends the channel both ways, waking the owner's read; the owner then closes it.
    package func shutdown() {
        state.withLock { s in
            if let fd = s.fd { _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_RDWR)) }
        }
    }

    /// One PDU, cut to `limit` octets, into the start of `buffer`, whose size never changes: its
    /// length, or nil at the end of the channel. On a SOCK_SEQPACKET socket the part of a PDU
    /// past `limit` is dropped, not left for the next read.
    static func receive(_ fd: FileDescriptor, into buffer: inout [UInt8], limit: Int) -> Int? {
        let length = min(limit, buffer.count)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd.rawValue, $0.baseAddress, length, 0) }
            if count > 0 { return count }
            if count < 0, errno == EINTR { continue }
            return nil
        }
    }

    /// Whether the link is encrypted, as the kernel tells the socket (security level MEDIUM or
    /// above); false for a descriptor that is no Bluetooth socket.
    private static func isEncrypted(_ fd: FileDescriptor) -> Bool {
        var security = bt_security()
        var length = socklen_t(MemoryLayout<bt_security>.size)
        guard getsockopt(fd.rawValue, SOL_BLUETOOTH, BT_SECURITY, &security, &length) == 0 else { return false }
        return Int32(security.level) >= BT_SECURITY_MEDIUM
    }

    /// One PDU in one send: nil, or the errno.
    private static func send(_ pdu: [UInt8], on fd: FileDescriptor, flags: Int32) -> Int32? {
        while true {
            let written = pdu.withUnsafeBytes { Glibc.send(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | flags) }
            if written == pdu.count { return nil }
            if written < 0, errno == EINTR { continue }
            return written < 0 ? errno : EMSGSIZE
        }
    }
}
