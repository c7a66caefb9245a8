/// A byte pipe to a UWBS: USB bulk endpoints, a tty, a TCP socket (pica, our world server), or
/// memory. UCI packets travel back to back with no extra framing on all of them, so one stream
/// decoder serves every transport.
public protocol UCITransport: AnyObject, Sendable, CustomStringConvertible {
    /// Writes all of `bytes` (one or more whole packets).
    func write(_ bytes: [UInt8]) async throws
    /// The next bytes from the device, in order; nil once the device is gone. One reader only.
    func read() async throws -> [UInt8]?
    /// Ends the stream; a pending `read` returns nil.
    func close()
}

public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    case closed
    case system(call: String, errno: Int32, message: String)
    case invalidEndpoint(String)

    public var description: String {
        switch self {
        case .closed: "the transport is closed"
        case .system(let call, let code, let message): "\(call) failed: \(message) (errno \(code))"
        case .invalidEndpoint(let text): "invalid endpoint \(text)"
        }
    }
}
