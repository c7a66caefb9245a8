import Glibc
import SystemPackage

/// Why a byte stream failed. Each case says what happened; what to do about it is
/// `Doctor.remedy(for:)`'s business, which switches on these cases.
package enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    case closed
    case system(call: String, errno: Int32, message: String)
    /// Opening a device node (a tty) failed with `errno`: EACCES, ENOENT and EBUSY are the usual.
    case openDevice(path: String, errno: Int32)
    case invalidEndpoint(String)

    package var description: String {
        switch self {
        case .closed: "the transport is closed"
        case .system(let call, let code, let message): "\(call) failed: \(message) (errno \(code))"
        case .openDevice(let path, let code): "open(\(path)) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .invalidEndpoint(let text): "invalid endpoint \(text)"
        }
    }

    /// A failed system call, described by `errno`'s text.
    static func system(_ call: String, errno code: Int32) -> TransportError {
        .system(call, Errno(rawValue: code))
    }

    /// A failed system call, with the error swift-system reported.
    static func system(_ call: String, _ error: Errno) -> TransportError {
        .system(call: call, errno: error.rawValue, message: String(cString: strerror(error.rawValue)))
    }
}
