import Glibc
import Synchronization
import SystemPackage

/// A failed write to the events' output, with the system's reason.
package struct OutputError: Error, CustomStringConvertible, Equatable {
    package var errno: Int32

    package init(errno: Int32) { self.errno = errno }

    /// The errno's symbol, e.g. EPIPE.
    package var name: String {
        switch errno {
        case EPIPE: "EPIPE"
        case ENOSPC: "ENOSPC"
        case EBADF: "EBADF"
        case EIO: "EIO"
        case EINVAL: "EINVAL"
        case EFBIG: "EFBIG"
        case EDQUOT: "EDQUOT"
        case ECONNRESET: "ECONNRESET"
        default: "errno \(errno)"
        }
    }

    package var description: String {
        switch errno {
        case EBADF: "stdout is closed (EBADF)"
        case EPIPE: "the reader of stdout went away (EPIPE: \(String(cString: strerror(errno))))"
        default: "\(String(cString: strerror(errno))) (\(name))"
        }
    }
}
