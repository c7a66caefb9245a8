import BLE
import Events
import Glibc
import Synchronization
import UCIHost

final class RotatingLineFile: Sendable {
    private let state: Mutex<(fd: Int32, size: Int)>
    private let path: String
    private let maxBytes: Int

    init(path: String, maxBytes: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CaptureError.cannotWrite(path: path, errno: errno) }
        self.path = path
        self.maxBytes = maxBytes
        state = Mutex((fd, 0))
    }

    func append(_ line: String) {
        let bytes = Array(line.utf8)
        state.withLock { s in
            if s.size + bytes.count > maxBytes, s.size > 0 {
                close(s.fd)
                for n in stride(from: 3, through: 1, by: -1) { rename("\(path).\(n)", "\(path).\(n + 1)") }
                rename(path, "\(path).1")
                s.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                s.size = 0
            }
            PcapWriter.writeAll(s.fd, bytes)
            s.size += bytes.count
        }
    }

    deinit {
        state.withLock { _ = close($0.fd) }
    }
}
