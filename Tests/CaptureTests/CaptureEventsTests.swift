import BLE
import Events
import Glibc
import Synchronization
import Testing
import UCI
import UCIHost
@testable import Capture

/// DIR/events.jsonl is a sink of its own: it keeps every event, the ranges a slow stdout sheds too.
@Suite struct CaptureEventsTests {
    final class StalledOutput: EventOutput {
        private let gate = Mutex(false)
        func open() { gate.withLock { $0 = true } }
        func write(line: String) throws {
            while !gate.withLock({ $0 }) { usleep(1000) }
        }
    }

    @Test func eventsFileIsTheCompleteRecordWhateverStdoutSheds() throws {
        var template = Array("/tmp/capture-events-XXXXXX".utf8CString)
        let path = String(cString: mkdtemp(&template)!)
        let capture = try CaptureDirectory(path: path)
        let stdout = StalledOutput()
        let stream = EventStream(sinks: [
            JSONLinesSink(output: stdout, includesRanges: true, bufferedLines: 4),
            try capture.eventSink(includesRanges: true),
        ])
        let range = Event(node: "a", body: .range(.init(peer: "b", status: "OK", distance: 1, filtered: 1, rate: 0, nlos: nil, azimuth: nil, elevation: nil)))
        for _ in 0..<12 { stream.emit(range, timestampMilliseconds: 0) }
        stdout.open()
        stream.drain()
        #expect(stream.takeShedRanges(node: "a") > 0)
        let text = String(decoding: RawFile.read("\(path)/events.jsonl"), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 12)
        #expect(lines.enumerated().allSatisfy { $0.element.hasPrefix(#"{"v":1,"seq":\#($0.offset + 1),"ts":"1970-01-01T00:00:00.000Z","type":"range""#) })
    }
}
