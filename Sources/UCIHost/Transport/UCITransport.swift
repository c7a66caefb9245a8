import StreamIO

/// A byte pipe to a UWBS: USB bulk endpoints, a tty, a TCP socket (pica, our world server), or
/// memory. UCI packets travel back to back with no extra framing on all of them, so one stream
/// decoder serves every transport.
///
/// Errors a transport throws reach `UCIHost`'s callers whole, as `UCIHostError.transport`: throw
/// typed errors (`TransportError`, `USBError`) so that callers and `Doctor.remedy(for:)` can
/// switch on them.
package protocol UCITransport: AnyObject, Sendable, CustomStringConvertible {
    /// Writes all of `bytes` (one or more whole packets).
    func write(_ bytes: [UInt8]) async throws
    /// The next bytes from the device, in order; nil once the device is gone. One reader only.
    func read() async throws -> [UInt8]?
    /// Ends the stream; a pending `read` returns nil.
    func close()
    /// Hands every read's bytes to `receive` on the thread that read them, instead of through
    /// `read` (no task hop per read); false if this transport cannot, and the host calls `read`.
    func deliverReads(to receive: @escaping ByteQueue.Receiver) -> Bool
}

extension UCITransport {
    package func deliverReads(to receive: @escaping ByteQueue.Receiver) -> Bool { false }
}

/// Sockets and ttys (StreamIO knows nothing of UCI; its API is exactly this protocol's).
extension StreamConnection: UCITransport {}
