import CLinux
import Glibc

/// The one way this package starts a thread of its own: a detached, named POSIX thread for a
/// blocking loop (a socket or tty reader, an accept loop, libusb's event loop, the BlueZ
/// management channel, an L2CAP link's reads).
///
/// - Detached: nobody joins it; the body's own loop decides when it ends, and whatever the body
///   captures lives until then.
/// - Named: `name` shows in `top -H`, `ps -L`, `perf` and gdb. Linux keeps 15 bytes of it; a longer
///   name is cut at a character boundary to fit.
/// - Never on Swift's cooperative pool: the body may block for as long as it likes.
///
/// Failing to create a thread (the process is out of threads or memory) is a precondition
/// failure: every caller needs its thread to work at all, and none could carry on without it.
///
/// Named `IOThread` rather than `Thread` so that it never clashes with Foundation's `Thread` in a
/// file that imports both. `public` so that any target (Events' stdout writer, later) can adopt it.
package enum IOThread {
    /// Linux's limit on a thread name, without the terminating NUL.
    package static let maximumNameLength = 15

    /// Starts `body` on a new detached thread named `name`.
    package static func detach(name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Start(name: fitted(name), body: body)
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            _ = pthread_setname_np(pthread_self(), start.name)
            start.body()
            return nil
        }, Unmanaged.passRetained(start).toOpaque())
        precondition(status == 0, "pthread_create(\(name)) failed: \(String(cString: strerror(status)))")
        pthread_detach(thread)
    }

    /// The longest prefix of `name`, cut at a character boundary, that Linux keeps whole.
    static func fitted(_ name: String) -> String {
        var fitted = ""
        var bytes = 0
        for character in name {
            bytes += character.utf8.count
            guard bytes <= maximumNameLength else { break }
            fitted.append(character)
        }
        return fitted
    }

    /// The calling thread's name, as Linux keeps it (for tests and diagnostics).
    package static func currentName() -> String? {
        let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].prefix { $0 != 0x0A }, as: UTF8.self)
    }

    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
