import ByteCoding
import Glibc
import Synchronization

/// Writes classic pcap files (tcpdump's format: 24-byte global header, 16-byte record headers,
/// little-endian magic 0xA1B2C3D4 in our byte order) with size-based rotation for long runs:
/// `name.pcap` is current, full files become `name.pcap.1`, `.2`, ... up to `keep`.
package final class PcapWriter: Sendable {
    /// LINKTYPE_FIRA_UCI: one raw UCI packet per record (Wireshark >= 4.2 decodes it).
    package static let firaUCI: UInt32 = 299
    /// LINKTYPE_BLUETOOTH_HCI_H4_WITH_PHDR: 4-byte big-endian direction (0 sent, 1 received), H4.
    package static let bluetoothH4WithDirection: UInt32 = 201

    private struct State {
        var fd: Int32
        var size: Int
    }
    private let state: Mutex<State>
    private let path: String
    private let linkType: UInt32
    private let maxBytes: Int
    private let keep: Int

    package init(path: String, linkType: UInt32, maxBytes: Int = 64 << 20, keep: Int = 4) throws {
        self.path = path
        self.linkType = linkType
        self.maxBytes = maxBytes
        self.keep = keep
        let fd = try Self.open(path, linkType: linkType)
        state = Mutex(State(fd: fd, size: 24))
    }

    package static func globalHeader(linkType: UInt32) -> [UInt8] {
        var header: [UInt8] = []
        header.appendLE(UInt32(0xA1B2_C3D4))
        header.appendLE(UInt16(2))
        header.appendLE(UInt16(4))
        header.appendLE(Int32(0))  // thiszone
        header.appendLE(UInt32(0))  // sigfigs
        header.appendLE(UInt32(65_535))  // snaplen
        header.appendLE(linkType)
        return header
    }

    package static func record(_ packet: [UInt8], microseconds: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLE(UInt32(truncatingIfNeeded: microseconds / 1_000_000))
        bytes.appendLE(UInt32(truncatingIfNeeded: microseconds % 1_000_000))
        bytes.appendLE(UInt32(packet.count))
        bytes.appendLE(UInt32(packet.count))
        return bytes + packet
    }

    package func write(_ packet: [UInt8], microseconds: Int64) {
        let bytes = Self.record(packet, microseconds: microseconds)
        state.withLock { s in
            if s.size + bytes.count > maxBytes, s.size > 24 { rotate(&s) }
            Self.writeAll(s.fd, bytes)
            s.size += bytes.count
        }
    }

    private func rotate(_ s: inout State) {
        close(s.fd)
        for n in stride(from: keep - 1, through: 1, by: -1) { rename("\(path).\(n)", "\(path).\(n + 1)") }
        rename(path, "\(path).1")
        if let fd = try? Self.open(path, linkType: linkType) {
            s.fd = fd
            s.size = 24
        }
    }

    private static func open(_ path: String, linkType: UInt32) throws -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CaptureError.cannotWrite(path: path, errno: errno) }
        writeAll(fd, globalHeader(linkType: linkType))
        return fd
    }

    /// Writes all of `bytes`, or stops at the first error: nil, or the errno that stopped it.
    /// The pcap and event files go on after a failed write (a capture must not stop the node);
    /// the secrets file must not be left half written.
    @discardableResult
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 { offset += written } else if errno != EINTR { return errno }
        }
        return nil
    }

    deinit {
        state.withLock { _ = close($0.fd) }
    }
}

/// What went wrong with a capture directory, naming the file.
package enum CaptureError: Error, CustomStringConvertible {
    /// Recording: a file or the directory could not be created or written.
    case cannotWrite(path: String, errno: Int32)
    /// Replaying: a file the capture should hold could not be read.
    case cannotRead(path: String, errno: Int32)
    /// Replaying: a file is there but does not hold what a capture writes.
    case malformed(path: String, reason: String)
    /// Replaying: a file the capture needs is not there, and why it is needed.
    case missing(path: String, reason: String)

    package var description: String {
        switch self {
        case .cannotWrite(let path, let errno): "cannot write capture file \(path): \(String(cString: strerror(errno)))"
        case .cannotRead(let path, let errno):
            "cannot read \(path): \(String(cString: strerror(errno)))"
                + (path.hasSuffix("/capture.json") ? " (not a --capture directory?)" : "")
        case .malformed(let path, let reason): "\(path) is not a capture file nearby-bridge wrote: \(reason)"
        case .missing(let path, let reason): "\(path) is missing: \(reason)"
        }
    }
}
