import Glibc
import SystemPackage

/// The client's end of an ATT bearer in the tests: one send is one PDU, one receive one PDU.
struct SeqpacketClient {
    let fd: FileDescriptor

    func send(_ pdu: [UInt8]) throws {
        let written = pdu.withUnsafeBytes { Glibc.send(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard written == pdu.count else { throw Errno(rawValue: errno) }
    }

    /// Sends a request and returns the one PDU that answers it.
    func ask(_ pdu: [UInt8]) throws -> [UInt8]? {
        try send(pdu)
        return receive()
    }

    /// The next PDU, whole, or nil when none comes in time (or at end of file).
    func receive(timeoutMilliseconds: Int32 = 5_000) -> [UInt8]? {
        var request = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, timeoutMilliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = buffer.withUnsafeMutableBytes { recv(fd.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return count > 0 ? Array(buffer[0..<count]) : nil
    }

    /// Whether the next read is end of file, within a few seconds.
    func seesEndOfFile() -> Bool {
        var request = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, 5_000) == 1 else { return false }
        var octet: UInt8 = 0
        return recv(fd.rawValue, &octet, 1, Int32(MSG_DONTWAIT)) == 0
    }
}
