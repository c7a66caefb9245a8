import Glibc
import Testing

@testable import Events

@Suite struct JSONLineTests {
    let node = "0123456789abcdef"
    let peer = "fedcba9876543210"

    @Test func rendersEveryTypeWithFixedKeyOrder() {
        let cases: [(Event.Body, String)] = [
            (
                .device(.init(radio: .uwb, state: .ready, backend: "tcp:127.0.0.1:7000", detail: ["uci": "2.0.0", "mac": "1.3.0"])),
                #""radio":"uwb","state":"ready","backend":"tcp:127.0.0.1:7000","detail":{"mac":"1.3.0","uci":"2.0.0"}}"#
            ),
            (.peerFound(.init(peer: peer, name: "Alice", rssi: -61)), #""peer":"fedcba9876543210","name":"Alice","rssi":-61}"#),
            (.peerFound(.init(peer: peer, name: "", rssi: nil)), #""peer":"fedcba9876543210","name":"","rssi":null}"#),
            (
                .range(.init(peer: peer, status: "OK", distance: 1.23456, filtered: nil, rate: nil, nlos: false, azimuth: -12.34, elevation: nil)),
                #""peer":"fedcba9876543210","status":"OK","distance":1.235,"filtered":null,"rate":null,"nlos":false,"azimuth":-12.3,"elevation":null}"#
            ),
            (
                .range(.init(peer: peer, status: "OK_NEGATIVE_DISTANCE_REPORT", distance: -0.03, filtered: 0, rate: -0.4567, nlos: nil, azimuth: nil, elevation: nil)),
                #""peer":"fedcba9876543210","status":"OK_NEGATIVE_DISTANCE_REPORT","distance":-0.030,"filtered":0.000,"rate":-0.457,"nlos":null,"azimuth":null,"elevation":null}"#
            ),
            (.near(.init(peer: peer, distance: 0.9, azimuth: nil)), #""peer":"fedcba9876543210","distance":0.900,"azimuth":null}"#),
            (.far(.init(peer: peer, distance: 1.5, azimuth: 45)), #""peer":"fedcba9876543210","distance":1.500,"azimuth":45.0}"#),
            (
                .bump(.init(peer: peer, bumpID: 3, distance: -0.02, cardJSON: #"{"name":"Bob"}"#)),
                #""peer":"fedcba9876543210","bump_id":3,"distance":-0.020,"card":{"name":"Bob"}}"#
            ),
            (.peerLost(.init(peer: peer, reason: .peerEnded)), #""peer":"fedcba9876543210","reason":"peer-ended"}"#),
            (.nearest(.init(peer: peer, distance: 0.4321, band: .near)), #""peer":"fedcba9876543210","distance":0.432,"band":"near"}"#),
            (.nearest(.init(peer: nil, distance: nil, band: nil)), #""peer":null,"distance":null,"band":null}"#),
            (.peerLost(.init(peer: peer, reason: .evicted)), #""peer":"fedcba9876543210","reason":"evicted"}"#),
            (.rough(.init(peer: peer, rssi: -71, band: .medium)), #""peer":"fedcba9876543210","rssi":-71,"band":"medium"}"#),
            (
                .stats(.init(peers: 1000, ranging: 8, budget: 8, shedRanges: 12, shedInputs: 0, evicted: 3)),
                #""peers":1000,"ranging":8,"budget":8,"shed_ranges":12,"shed_inputs":0,"evicted":3}"#
            ),
        ]
        for (body, tail) in cases {
            let line = JSONLine.render(Event(node: node, body: body), seq: 7, timestampMilliseconds: 1_700_000_000_123)
            let type = Event(node: node, body: body).type
            #expect(
                line == #"{"v":1,"seq":7,"ts":"2023-11-14T22:13:20.123Z","type":""# + type + #"","node":"0123456789abcdef","# + tail + "\n")
        }
    }

    /// Reference values computed independently (`date -u -d @SECONDS`).
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
        (Int64(1_700_000_000_123), "2023-11-14T22:13:20.123Z"),
        (Int64(4_102_444_799_999), "2099-12-31T23:59:59.999Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
    ])
    func isoTimestamps(milliseconds: Int64, expected: String) {
        #expect(ISO8601.string(millisecondsSinceEpoch: milliseconds) == expected)
    }

    @Test func escapesControlCharactersSoALineStaysOneLine() {
        let body = Event.Body.peerFound(.init(peer: peer, name: "a\"b\\c\nd\u{01}é", rssi: nil))
        let line = JSONLine.render(Event(node: node, body: body), seq: 1, timestampMilliseconds: 0)
        #expect(line.contains(#""name":"a\"b\\c\nd\u0001é""#))
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.last == "\n")
    }

    @Test func fixedPointRoundsHalfAwayFromZeroAndDropsNegativeZero() {
        #expect(JSONObjectWriter.fixed(0.0005, decimals: 3) == "0.001")
        #expect(JSONObjectWriter.fixed(-0.0004, decimals: 3) == "0.000")
        #expect(JSONObjectWriter.fixed(-1.25, decimals: 1) == "-1.3")
        #expect(JSONObjectWriter.fixed(655.35, decimals: 3) == "655.350")
    }
}

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
    }
}

import Synchronization

/// An output that blocks every write until opened, like a pipe whose reader is busy.
final class GatedOutput: EventOutput {
    private let gate = Mutex(false)
    private let storage = Mutex<[String]>([])
    func open() { gate.withLock { $0 = true } }
    func write(line: String) throws {
        while !gate.withLock({ $0 }) { usleep(1000) }
        storage.withLock { $0.append(line) }
    }
    var lines: [String] { storage.withLock { $0 } }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
