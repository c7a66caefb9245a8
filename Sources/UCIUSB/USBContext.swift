import CLibUSB
import Glibc
import StreamIO
import Synchronization

/// The process's libusb context and the one thread that handles its events.
///
/// libusb completes asynchronous transfers only while some thread is inside
/// `libusb_handle_events*`; a dedicated thread does that for the whole process, so transfer
/// callbacks never run on Swift's cooperative pool. The context lives as long as the process.
final class USBContext: Sendable {
    /// The libusb context pointer; libusb is thread-safe for everything we call on it.
    nonisolated(unsafe) let raw: OpaquePointer

    static let shared: Result<USBContext, USBError> = {
        var context: OpaquePointer?
        let status = libusb_init(&context)
        guard status == 0, let context else { return .failure(USBError("libusb_init", status)) }
        return .success(USBContext(raw: context))
    }()

    private init(raw: OpaquePointer) {
        self.raw = raw
        IOThread.detach(name: "libusb-events") { [self] in
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            while true { libusb_handle_events_timeout_completed(self.raw, &timeout, nil) }
        }
    }

    static func get() throws(USBError) -> USBContext {
        try shared.get()
    }
}
