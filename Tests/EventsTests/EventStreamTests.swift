import Glibc
import Testing
@testable import Events
import Synchronization

@Suite struct EventStreamTests {
    struct BrokenPipe: Error {}

    final class FailingOutput: EventOutput {
        func write(line: String) throws { throw BrokenPipe() }
    }

    @Test func stampsConsecutiveSequenceNumbersAndSkipsRangesUnlessAsked() {
        let output = CollectedEvents()
        let stream = EventStream(output: output, includesRanges: false)
        let range = Event(node: "a", body: .range(.init(peer: "b", status: "OK", distance: 1, filtered: 1, rate: 0, nlos: nil, azimuth: nil, elevation: nil)))
        let lost = Event(node: "a", body: .peerLost(.init(peer: "b", reason: .timeout)))
        stream.emit(lost, timestampMilliseconds: 0)
        stream.emit(range, timestampMilliseconds: 0)
        stream.emit(lost, timestampMilliseconds: 0)
        #expect(output.lines.count == 2)
        #expect(output.lines[0].contains(#""seq":1,"#))
        #expect(output.lines[1].contains(#""seq":2,"#))

        let withRanges = CollectedEvents()
        EventStream(output: withRanges, includesRanges: true).emit(range, timestampMilliseconds: 0)
        #expect(withRanges.lines.count == 1)
    }

    /// A stdout that cannot keep up: range events are shed (and counted per node), every other
    /// event is written, in order, with consecutive sequence numbers.
    @Test func aSlowOutputShedsRangesButNeverOtherEvents() {
        let output = GatedOutput()
        let stream = EventStream(output: output, includesRanges: true, bufferedLines: 8)
        let range = Event(node: "a", body: .range(.init(peer: "b", status: "OK", distance: 1, filtered: 1, rate: 0, nlos: nil, azimuth: nil, elevation: nil)))
        let near = Event(node: "a", body: .near(.init(peer: "b", distance: 0.9, azimuth: nil)))
        for _ in 0..<20 { stream.emit(range, timestampMilliseconds: 0) }
        for _ in 0..<20 { stream.emit(near, timestampMilliseconds: 0) }  // past the soft limit, below the hard one
        #expect(stream.queuedLines <= 32)
        output.open()
        stream.drain()
        let lines = output.lines
        let ranges = lines.filter { $0.contains(#""type":"range""#) }.count
        #expect(lines.filter { $0.contains(#""type":"near""#) }.count == 20)
        #expect(ranges >= 1 && ranges < 20)
        #expect(stream.takeShedRanges(node: "a") == 20 - ranges)
        #expect(stream.takeShedRanges(node: "a") == 0)
        #expect(lines.enumerated().allSatisfy { $0.element.contains(#""seq":\#($0.offset + 1),"#) })
    }

    @Test func aFailedWriteIsReportedOnceAndStopsOutput() {
        let failures = Counter()
        let stream = EventStream(output: FailingOutput(), includesRanges: false) { _ in failures.increment() }
        let event = Event(node: "a", body: .peerLost(.init(peer: "b", reason: .timeout)))
        stream.emit(event, timestampMilliseconds: 0)
        stream.emit(event, timestampMilliseconds: 0)
        #expect(failures.value == 1)
        let drained = stream.drain()
        #expect(drained.failure is BrokenPipe)
        #expect(drained.unwritten == 2)
    }

    /// Buffered, on both paths: the writer thread's (an output that cannot say whether it would
    /// block) and the emitter's own write (one that says it would not). The third write fails;
    /// the handler hears of it once, with that error, and nothing is written after it.
    @Test(arguments: [false, true])
    func aFailedBufferedWriteIsReportedOnceWithTheErrorAndNothingIsWrittenAfter(writableWithoutWaiting: Bool) async throws {
        let output = BreakingOutput(failingAt: 3, writableWithoutWaiting: writableWithoutWaiting)
        let failures = Mutex<[OutputError]>([])
        let stream = EventStream(output: output, includesRanges: false, bufferedLines: 8) { error in
            failures.withLock { $0.append(error as! OutputError) }
        }
        let event = Event(node: "a", body: .peerLost(.init(peer: "b", reason: .timeout)))
        for _ in 0..<3 {
            stream.emit(event, timestampMilliseconds: 0)
            while output.attempts < 3, stream.queuedLines > 0 { usleep(100) }
        }
        while failures.withLock({ $0.isEmpty }) { usleep(100) }
        for _ in 0..<5 { stream.emit(event, timestampMilliseconds: 0) }
        let drained = stream.drain()
        #expect(failures.withLock { $0 } == [OutputError(errno: EPIPE)])
        #expect(drained.failure as? OutputError == OutputError(errno: EPIPE))
        #expect(output.attempts == 3)
        #expect(output.written.count == 2)
        #expect(output.written.enumerated().allSatisfy { $0.element.contains(#""seq":\#($0.offset + 1),"#) })
        #expect(drained.unwritten == 6)
        usleep(20_000)
        #expect(output.attempts == 3)
    }

    /// A reader that never reads: after `stopWaiting`, emitters past the hard limit no longer
    /// wait (their lines are counted, not written) and `drain` returns by the deadline.
    @Test func stoppingStopsWaitingForAStalledOutput() async throws {
        let output = GatedOutput()
        let stream = EventStream(output: output, includesRanges: false, bufferedLines: 2)
        let near = Event(node: "a", body: .near(.init(peer: "b", distance: 0.9, azimuth: nil)))
        for _ in 0..<8 { stream.emit(near, timestampMilliseconds: 0) }  // at the hard limit (4 x 2)
        stream.stopWaiting(within: .milliseconds(200))
        for _ in 0..<5 { stream.emit(near, timestampMilliseconds: 0) }  // would wait without the stop
        let start = ContinuousClock.now
        let drained = stream.drain()
        let waited = ContinuousClock.now - start
        #expect(waited < .seconds(2))
        #expect(drained.failure == nil)
        #expect(drained.unwritten == 13)
        output.open()
    }

    /// The emitter's own writes and the writer thread's never overlap or reorder: eight threads
    /// emit at once into an output that sometimes says it would block.
    @Test func concurrentEmittersKeepLinesWholeAndInOrder() async throws {
        let output = FlakyReadinessOutput()
        let stream = EventStream(output: output, includesRanges: true, bufferedLines: 100_000)
        let range = Event(node: "a", body: .range(.init(peer: "b", status: "OK", distance: 1, filtered: 1, rate: 0, nlos: nil, azimuth: nil, elevation: nil)))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<2_000 { stream.emit([range, range], timestampMilliseconds: 0) } }
            }
        }
        let drained = stream.drain()
        #expect(drained.unwritten == 0)
        let lines = output.lines
        #expect(lines.count == 32_000)
        #expect(lines.enumerated().allSatisfy { $0.element.hasPrefix(#"{"v":1,"seq":\#($0.offset + 1),"#) && $0.element.hasSuffix("}\n") })
        #expect(output.overlapped == false)
    }

    @Test func standardOutputWritesWholeLinesToItsDescriptor() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let output = StandardOutput(fileDescriptor: fds[1])
        #expect(output.isWritableWithoutWaiting())
        try output.write(lines: ["{\"a\":1}\n", "{\"b\":2}\n"])
        try output.write(line: "{\"c\":3}\n")
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fds[0], &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(count), as: UTF8.self) == "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n")
        close(fds[1])
        #expect(throws: OutputError(errno: EBADF)) { try output.write(line: "x\n") }
    }

    /// The buffered stream hands stdout a batch's render buffer as it is: the bytes must be the
    /// lines `JSONLine` renders one by one.
    @Test func bufferedBatchReachesStandardOutputAsRenderedLines() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let stream = EventStream(output: StandardOutput(fileDescriptor: fds[1]), includesRanges: true, bufferedLines: 8)
        let events = [
            Event(node: "a", body: .range(.init(peer: "b", status: "OK", distance: 1.25, filtered: 1.2, rate: -0.1, nlos: false, azimuth: 3, elevation: nil))),
            Event(node: "a", body: .peerNamed(.init(peer: "b", name: "Zoë \"z\"\n"))),
            Event(node: "a", body: .peerLost(.init(peer: "b", reason: .timeout))),
        ]
        stream.emit(events, timestampMilliseconds: 1_700_000_000_123)
        stream.emit(events[2], timestampMilliseconds: 1_700_000_000_124)
        #expect(stream.drain().unwritten == 0)
        close(fds[1])
        var written: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            guard count > 0 else { break }
            written += buffer.prefix(count)
        }
        let expected =
            events.enumerated().map { JSONLine.render($1, seq: UInt64($0 + 1), timestampMilliseconds: 1_700_000_000_123) }.joined()
            + JSONLine.render(events[2], seq: 4, timestampMilliseconds: 1_700_000_000_124)
        #expect(String(decoding: written, as: UTF8.self) == expected)
    }
}

/// Says every third time that it would block; notices two writes at once.
private final class FlakyReadinessOutput: EventOutput {
    private let state = Mutex<(lines: [String], asked: Int)>(([], 0))
    private let writing = Atomic<Bool>(false)
    private let overlap = Atomic<Bool>(false)
    func write(line: String) throws { try write(lines: [line]) }
    func write(lines: [String]) throws {
        if writing.exchange(true, ordering: .acquiringAndReleasing) { overlap.store(true, ordering: .relaxed) }
        if lines.count > 1 { usleep(50) }
        state.withLock { $0.lines += lines }
        writing.store(false, ordering: .releasing)
    }
    func isWritableWithoutWaiting() -> Bool {
        state.withLock { s in
            s.asked += 1
            return s.asked % 3 != 0
        }
    }
    var lines: [String] { state.withLock { $0.lines } }
    var overlapped: Bool { overlap.load(ordering: .relaxed) }
}
