@testable import BLEBlueZ
import CBlueZ
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

    /// Sends a request and returns its response (the request's opcode + 1) or Error Response,
    /// answering on the way what the other side's GATT client sends on the same bearer (beside
    /// bluetoothd both ends run one): its requests get Request Not Supported, its indications a
    /// confirmation, and notifications are passed over.
    func response(to request: [UInt8]) throws -> [UInt8]? {
        try send(request)
        while let pdu = receive() {
            let opcode = pdu[0]
            if opcode == request[0] + 1 || opcode == 0x01 { return pdu }
            if opcode == 0x1D { try send([0x1E]) }
            if opcode & 0x01 == 0, opcode != 0x1B, opcode != 0x1D, opcode & 0x40 == 0 { try send([0x01, opcode, 0x00, 0x00, 0x06]) }
        }
        return nil
    }

    /// Whether the next read is end of file, within a few seconds.
    func seesEndOfFile() -> Bool {
        var request = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, 5_000) == 1 else { return false }
        var octet: UInt8 = 0
        return recv(fd.rawValue, &octet, 1, Int32(MSG_DONTWAIT)) == 0
    }

    /// An LE ATT socket on `source` connected to `destination` (public addresses), blocking.
    static func connectATT(from source: [UInt8], to destination: [UInt8]) throws -> SeqpacketClient {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_L2CAP)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        let client = SeqpacketClient(fd: FileDescriptor(rawValue: fd))
        var address = sockaddr_l2()
        address.l2_family = sa_family_t(AF_BLUETOOTH)
        address.l2_cid = L2CAPSocket.attCID.littleEndian
        address.l2_bdaddr = L2CAPSocket.bdaddr(source)
        address.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
        var status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
        }
        if status == 0 {
            address.l2_bdaddr = L2CAPSocket.bdaddr(destination)
            status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
            }
        }
        guard status == 0 else {
            let error = Errno(rawValue: errno)
            try? client.fd.close()
            throw error
        }
        return client
    }
}
