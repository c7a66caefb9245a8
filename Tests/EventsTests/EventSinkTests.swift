import Foundation
import Glibc
import Synchronization
import Testing

@testable import Events

/// The stream as a fan-out: every sink gets the same typed events in the same order, each with
/// its own buffer, shedding, `seq` and failure.
@Suite struct EventSinkTests {
    struct BrokenPipe: Error {}

    final class FailingOutput: EventOutput {
        func write(line: String) throws { throw BrokenPipe() }
    }

    /// Keeps what it receives, typed.
    final class RecordingSink: EventSink {
        private let storage = Mutex<[(event: Event, ts: Int64)]>([])
        func receive(_ events: [Event], timestampMilliseconds: Int64) {
            storage.withLock { $0 += events.map { ($0, timestampMilliseconds) } }
        }
        func drain() -> DrainResult { DrainResult() }
        var received: [(event: Event, ts: Int64)] { storage.withLock { $0 } }
    }

    let range = Event(node: "a", body: .range(.init(peer: "b", status: "OK", distance: 1, filtered: 1, rate: 0, nlos: nil, azimuth: nil, elevation: nil)))
    let near = Event(node: "a", body: .near(.init(peer: "b", distance: 0.9, azimuth: nil)))
    let lost = Event(node: "a", body: .peerLost(.init(peer: "b", reason: .timeout)))

    @Test func twoSinksGetTheSameTypedEventsInOrder() async {
        let (first, second) = (RecordingSink(), RecordingSink())
        let stream = EventStream(sinks: [first, second])
        stream.emit(near, timestampMilliseconds: 1)
        stream.emit([range, lost], timestampMilliseconds: 2)
        stream.emit(range, timestampMilliseconds: 3)
        #expect(first.received.map(\.event) == [near, range, lost, range])
        #expect(first.received.map(\.ts) == [1, 2, 2, 3])
        #expect(second.received.map(\.event) == first.received.map(\.event))
        #expect(second.received.map(\.ts) == first.received.map(\.ts))

        // Concurrent emitters: whatever the interleaving, both sinks see the same one, and each
        // batch whole.
        let (third, fourth) = (RecordingSink(), RecordingSink())
        let concurrent = EventStream(sinks: [third, fourth])
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    let mine = Event(node: "n\(thread)", body: .peerLost(.init(peer: "b", reason: .timeout)))
                    for i in 0..<500 { concurrent.emit([mine, mine], timestampMilliseconds: Int64(i)) }
                }
            }
        }
        let seen = third.received
        #expect(seen.count == 4_000)
        #expect(seen.map(\.event) == fourth.received.map(\.event))
        #expect(seen.map(\.ts) == fourth.received.map(\.ts))
        #expect(stride(from: 0, to: seen.count, by: 2).allSatisfy { seen[$0].event == seen[$0 + 1].event && seen[$0].ts == seen[$0 + 1].ts })
    }

    /// stdout that cannot keep up sheds its own `range` lines; the capture's sink, beside it,
    /// neither sheds nor loses anything, and each numbers its own lines 1, 2, 3...
    @Test func aSlowSinkShedsItsOwnRangesWithoutMakingAnotherShed() {
        let slow = GatedOutput()
        let complete = CollectedEvents()
        let stdout = JSONLinesSink(output: slow, includesRanges: true, bufferedLines: 8)
        let capture = JSONLinesSink(output: complete, includesRanges: true)
        let stream = EventStream(sinks: [stdout, capture])
        for _ in 0..<20 { stream.emit(range, timestampMilliseconds: 0) }
        for _ in 0..<20 { stream.emit(near, timestampMilliseconds: 0) }  // past the soft limit, below the hard one
        #expect(stream.queuedLines <= 32)

        // The complete sink already has everything, while the slow one still waits.
        #expect(complete.lines.count == 40)
        #expect(complete.lines.filter { $0.contains(#""type":"range""#) }.count == 20)
        #expect(complete.lines.enumerated().allSatisfy { $0.element.hasPrefix(#"{"v":1,"seq":\#($0.offset + 1),"#) })

        slow.open()
        let drained = stream.drain()
        #expect(drained.unwritten == 0 && drained.failure == nil)
        let lines = slow.lines
        let ranges = lines.filter { $0.contains(#""type":"range""#) }.count
        #expect(lines.filter { $0.contains(#""type":"near""#) }.count == 20)
        #expect(ranges >= 1 && ranges < 20)
        #expect(lines.enumerated().allSatisfy { $0.element.hasPrefix(#"{"v":1,"seq":\#($0.offset + 1),"#) })
        #expect(capture.takeShedRanges(node: "a") == 0)
        #expect(stream.takeShedRanges(node: "a") == 20 - ranges)
        #expect(stream.takeShedRanges(node: "a") == 0)
    }

    /// Each sink stamps `seq` over the lines it writes: one without ranges counts only the rest.
    @Test func eachSinksSeqRunsOverItsOwnLines() {
        let (withRanges, withoutRanges) = (CollectedEvents(), CollectedEvents())
        let stream = EventStream(sinks: [
            JSONLinesSink(output: withoutRanges, includesRanges: false),
            JSONLinesSink(output: withRanges, includesRanges: true),
        ])
        #expect(stream.includesRanges)
        stream.emit([range, near], timestampMilliseconds: 0)
        stream.emit([range, lost], timestampMilliseconds: 0)
        #expect(withRanges.lines.map { $0.contains(#""type":"range""#) } == [true, false, true, false])
        #expect(withRanges.lines.enumerated().allSatisfy { $0.element.hasPrefix(#"{"v":1,"seq":\#($0.offset + 1),"#) })
        #expect(withoutRanges.lines.count == 2)
        #expect(withoutRanges.lines[0].hasPrefix(#"{"v":1,"seq":1,"ts":"1970-01-01T00:00:00.000Z","type":"near""#))
        #expect(withoutRanges.lines[1].hasPrefix(#"{"v":1,"seq":2,"ts":"1970-01-01T00:00:00.000Z","type":"peer.lost""#))

        // No sink wants ranges: the stream says so.
        #expect(!EventStream(output: CollectedEvents(), includesRanges: false).includesRanges)
    }

    /// A sink whose output fails reports it once and stops; the others go on with every line,
    /// unbuffered and buffered alike.
    @Test(arguments: [false, true])
    func aFailingSinkDoesNotStopTheOthers(buffered: Bool) {
        let failures = Counter()
        let unbroken = CollectedEvents()
        let broken = JSONLinesSink(
            output: buffered ? BreakingOutput(failingAt: 1, writableWithoutWaiting: true) : FailingOutput(),
            includesRanges: false, bufferedLines: buffered ? 8 : nil
        ) { _ in failures.increment() }
        let stream = EventStream(sinks: [broken, JSONLinesSink(output: unbroken, includesRanges: false, bufferedLines: buffered ? 8 : nil)])
        for _ in 0..<3 { stream.emit(lost, timestampMilliseconds: 0) }
        let drained = stream.drain()
        #expect(failures.value == 1)
        #expect(drained.failure != nil)
        #expect(drained.unwritten == 3)
        #expect(unbroken.lines.count == 3)
        #expect(unbroken.lines.enumerated().allSatisfy { $0.element.hasPrefix(#"{"v":1,"seq":\#($0.offset + 1),"#) })
    }

    /// The bytes of a line do not depend on how many sinks there are or which one wrote it.
    @Test func theGoldenLineIsUnchanged() {
        let golden = #"{"v":1,"seq":1,"ts":"2023-11-14T22:13:20.123Z","type":"near","node":"0123456789abcdef","peer":"fedcba9876543210","distance":0.900,"azimuth":null}"# + "\n"
        let event = Event(node: "0123456789abcdef", body: .near(.init(peer: "fedcba9876543210", distance: 0.9, azimuth: nil)))
        let alone = CollectedEvents()
        EventStream(output: alone, includesRanges: false).emit(event, timestampMilliseconds: 1_700_000_000_123)
        #expect(alone.lines == [golden])

        let (buffered, unbuffered) = (CollectedEvents(), CollectedEvents())
        let stream = EventStream(sinks: [
            JSONLinesSink(output: buffered, includesRanges: true, bufferedLines: 16),
            JSONLinesSink(output: unbuffered, includesRanges: false),
        ])
        stream.emit(event, timestampMilliseconds: 1_700_000_000_123)
        stream.drain()
        #expect(buffered.lines == [golden])
        #expect(unbuffered.lines == [golden])
    }
}
