import BLE
import Events
import Glibc
import Synchronization
import UCIHost

/// `--capture DIR`: per node `DIR/<node>/uci.pcap` and `ble.pcap`, and `DIR/events.jsonl`, the
/// complete event stream as JSON Lines (stdout's lines, less nothing it shed: without pressure on
/// stdout both are the same bytes). Each file rotates at `maxBytes`, keeping 4 old ones.
package final class CaptureDirectory: Sendable {
    package let path: String
    private let maxBytes: Int

    package init(path: String, maxBytes: Int = 64 << 20) throws {
        self.path = path
        self.maxBytes = maxBytes
        try Self.makeDirectory(path)
    }

    /// Opens one node's capture files (DIR/<node>/uci.pcap and ble.pcap).
    package func recorder(node: String) throws -> NodeRecorder {
        let directory = "\(path)/\(node)"
        try Self.makeDirectory(directory)
        return NodeRecorder(
            uci: try PcapWriter(path: "\(directory)/uci.pcap", linkType: PcapWriter.firaUCI, maxBytes: maxBytes),
            hci: try PcapWriter(path: "\(directory)/ble.pcap", linkType: PcapWriter.bluetoothH4WithDirection, maxBytes: maxBytes))
    }

    /// DIR/events.jsonl as a sink of the event stream: the complete record. Unbuffered (each batch
    /// is appended before the emitter goes on) and it never sheds, so it keeps the `range` events
    /// a slow stdout drops; its `seq` counts its own lines. Use the same `includesRanges` as
    /// stdout's sink, so replay (which writes to stdout) can reproduce it.
    package func eventSink(includesRanges: Bool) throws -> any EventSink {
        JSONLinesSink(
            output: EventsFile(file: try RotatingLineFile(path: "\(path)/events.jsonl", maxBytes: maxBytes)),
            includesRanges: includesRanges)
    }

    private static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o755) != 0, errno != EEXIST { throw CaptureError.cannotWrite(path: path, errno: errno) }
    }
}

/// Appends lines to the rotating file; a batch goes in one write, into one file.
struct EventsFile: EventOutput {
    let file: RotatingLineFile

    func write(line: String) throws {
        file.append(line)
    }

    func write(lines: [String]) throws {
        file.append(lines.count == 1 ? lines[0] : lines.joined())
    }
}

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

/// One node's open capture files.
package struct NodeRecorder: Sendable {
    let uci: PcapWriter
    let hci: PcapWriter

    /// Wraps the node's UWB transport so its traffic is recorded; `clock` gives microseconds
    /// since the Unix epoch (virtual time in the simulation).
    package func wrap(uwb: any UCITransport, clock: @escaping @Sendable () -> Int64) -> any UCITransport {
        CapturingUCITransport(uwb, pcap: uci, clock: clock)
    }

    package func wrap(ble: any BLEAdapter, clock: @escaping @Sendable () -> Int64) -> any BLEAdapter {
        CapturingBLEAdapter(ble, pcap: hci, clock: clock)
    }
}
