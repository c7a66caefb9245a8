import BLE
import Events
import Glibc
import Synchronization
import Testing
import UCI
import UCIHost
@testable import Capture

enum RawFile {
    static func read(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n <= 0 { return bytes }
            bytes += chunk.prefix(n)
        }
    }
}
