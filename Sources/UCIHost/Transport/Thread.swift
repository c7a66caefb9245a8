import Glibc

/// A detached POSIX thread for blocking I/O loops (socket reads, accept, later libusb events).
/// Foundation's Thread would do, but this keeps the transport layer free of Foundation.
final class Thread: Sendable {
    private let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            let me = Unmanaged<Thread>.fromOpaque(raw!).takeRetainedValue()
            me.body()
            return nil
        }, box)
        precondition(status == 0, "pthread_create failed: \(status)")
        pthread_detach(thread)
    }
}
