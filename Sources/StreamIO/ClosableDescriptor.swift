import CLinux
import Glibc
import Synchronization
import SystemPackage

/// A file descriptor with exactly one owner record, so that it is closed once, and only when no
/// thread is using it (a reader waiting in `poll`, a writer part-way through a send).
///
/// Threads take a use with `acquire` and give it back with `release`. `close` asks every user to
/// stop: it signals an eventfd that `wait(for:)` polls beside the descriptor, rather than closing
/// the descriptor under a blocked thread (which on Linux does not wake a `read` on a tty, and lets
/// a newly opened file take the same number while the old user still holds it). The descriptor
/// and the eventfd are closed by whoever lets go last, `close` itself when nobody holds a use.
package final class ClosableDescriptor: Sendable {
    package let fd: FileDescriptor
    /// Signalled by `close`: what a waiting user polls beside `fd`.
    package let wake: FileDescriptor
    private struct State {
        var users = 0
        var closing = false
    }
    private let state = Mutex(State())

    /// Why the descriptor could not be set up (no eventfd); then it is closed already, and
    /// `acquire` always fails.
    package let failure: TransportError?

    /// Takes ownership of `fd`.
    package init(_ fd: FileDescriptor) {
        let wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        self.fd = fd
        self.wake = FileDescriptor(rawValue: wake)
        if wake < 0 {
            failure = .system("eventfd", Errno(rawValue: errno))
            state.withLock { $0.closing = true }
            try? fd.close()
        } else {
            failure = nil
        }
    }

    /// Takes a use of the descriptor; false once closing was asked for.
    package func acquire() -> Bool {
        state.withLock { s in
            guard !s.closing else { return false }
            s.users += 1
            return true
        }
    }

    /// Gives a use back; the last one out after `close` closes the descriptor.
    package func release() {
        let last = state.withLock { s in
            s.users -= 1
            return s.closing && s.users == 0
        }
        if last { closeNow() }
    }

    /// Asks every user to stop, and closes the descriptor now if nobody holds it. Idempotent.
    package func close() {
        let now = state.withLock { s -> Bool in
            guard !s.closing else { return false }
            s.closing = true
            guard s.users == 0 else {
                // Signalled under the lock: the last user cannot close the eventfd before this.
                var one: UInt64 = 1
                _ = withUnsafeBytes(of: &one) { try? wake.write($0) }
                return false
            }
            return true
        }
        if now { closeNow() }
    }

    /// Waits, holding a use, until the descriptor is ready for `events` (or has hung up or
    /// failed: the next call says why); false once closing was asked for.
    func wait(for events: Int16) -> Bool {
        var fds = [pollfd(fd: fd.rawValue, events: events, revents: 0), pollfd(fd: wake.rawValue, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return !state.withLock { $0.closing }
            }
            if fds[1].revents != 0 { return false }
            if fds[0].revents != 0 { return true }
        }
    }

    private func closeNow() {
        try? fd.close()
        try? wake.close()
    }
}
