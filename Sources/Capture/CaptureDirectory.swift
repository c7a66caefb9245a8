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
