import BLE
import Benchmark
import Bridge
import Events
import Foundation
import Logging
import PeerProtocol
import Simulation
import Synchronization
import UCI
import UCIHost

/// The figures of docs/PERFORMANCE.md. Run from this directory with `swift package benchmark`
/// (all) or `swift package benchmark --filter "pipeline.*"` (some; "security.*" for peer protocol v2).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .throughput, .mallocCountTotal], warmupIterations: 3, scalingFactor: .kilo,
        maxDuration: .seconds(5))

    pipelineBenchmarks()
    nodeBenchmarks()
    realTimeBenchmark()
    allocationBenchmark()
    memoryBenchmarks()
    crowdBenchmark()
    webViewBenchmark()
    mqttBenchmark()
    securityBenchmarks()
}

// MARK: The range path without actors: one thread, one core

/// 100 peers' notifications, decoded, processed and rendered as `NodeCore` does it, minus the
/// actor hops. Stages add up, so each stage's cost is the difference to the one before.
func pipelineBenchmarks() {
    let peers = 100
    let stream = Fixtures.notificationStream(peers: peers, rounds: 100)  // 10 000 notifications

    Benchmark("pipeline: decode (UCI bytes -> notification), per 1000") { benchmark in
        var decoder = UCIStreamDecoder()
        var next = 0
        for _ in benchmark.scaledIterations {
            decoder.append(stream[next])
            next = (next + 1) % stream.count
            blackHole(try? decoder.next().map(UCINotification.init))
        }
    }

    Benchmark("pipeline: decode + proximity, per 1000") { benchmark in
        var decoder = UCIStreamDecoder()
        var processors = RangePathWork.processors(peers: peers)
        var next = 0
        var time: Int64 = 0
        for _ in benchmark.scaledIterations {
            decoder.append(stream[next])
            next = (next + 1) % stream.count
            time += 1
            guard case .rangeData(let data)? = try? decoder.next().map(UCINotification.init) else { continue }
            blackHole(processors[data.session]?.process(data.measurements[0], of: data, hostTime: time))
        }
    }

    Benchmark("pipeline: decode + proximity + JSON line, per 1000") { benchmark in
        var path = RangePathWork(peers: peers)
        var next = 0
        for _ in benchmark.scaledIterations {
            blackHole(path.run(stream[next]))
            next = (next + 1) % stream.count
        }
    }
}

/// The range path's own work on one thread, without I/O or hand-offs: a notification's bytes
/// decoded, its measurement through the peer's proximity processing, its range line rendered
/// into a kept buffer (as the node's sink renders it). What any host that writes these lines
/// does at least, on top of the minimal reader's wake-up, read and write.
struct RangePathWork {
    private var decoder = UCIStreamDecoder()
    private var processors: [UInt32: RangeProcessor]
    private var time: Int64 = 0
    private var seq: UInt64 = 0
    private(set) var line: [UInt8] = []
    private let node = NodeHarness.identity.tag

    init(peers: Int) {
        processors = Self.processors(peers: peers)
    }

    /// One fresh processor per peer of `Fixtures.notificationStream`, by session handle.
    static func processors(peers: Int) -> [UInt32: RangeProcessor] {
        Dictionary(
            uniqueKeysWithValues: (0..<peers).map {
                (Fixtures.handle(ofPeer: $0), RangeProcessor(peer: PeerID(UInt64($0 + 1)).description, config: BridgeConfig()))
            })
    }

    /// The length of the line `bytes` (one notification) gave, 0 if none.
    mutating func run(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { run($0) }
    }

    /// The same for bytes read into a buffer; the line is then in `line`.
    mutating func run(_ bytes: UnsafeRawBufferPointer) -> Int {
        decoder.append(bytes)
        time += 1
        guard case .rangeData(let data)? = try? decoder.next().map(UCINotification.init),
            let outcome = processors[data.session]?.process(data.measurements[0], of: data, hostTime: time)
        else { return 0 }
        seq += 1
        line.removeAll(keepingCapacity: true)
        JSONLine.append(Event(node: node, body: .range(outcome.range)), seq: seq, timestampMilliseconds: time, to: &line)
        return line.count
    }
}

// MARK: The whole node: transport, host, inbox, registry, peer session actors, stream, write

/// Counts written range lines and measures, for each, the time since its notification's bytes
/// were handed to the transport (notifications and range lines correspond one to one, in order).
final class LineClock: Sendable {
    private struct State {
        var sent: [ContinuousClock.Instant] = []
        var nextToMatch = 0
        var latencies = Latencies()
        var written = 0
        /// `waitForWritten` callers and the count each waits for.
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        mutating func takeWaitersDone() -> [CheckedContinuation<Void, Never>] {
            guard !waiters.isEmpty else { return [] }
            let done = waiters.filter { $0.count <= written }.map(\.continuation)
            waiters.removeAll { $0.count <= written }
            return done
        }
    }
    private let state = Mutex(State())

    func sending() { state.withLock { $0.sent.append(.now) } }

    func wrote(_ line: String) {
        var line = line
        line.withUTF8 { wrote(utf8: UnsafeRawBufferPointer($0)) }
    }

    func wrote(utf8 line: UnsafeRawBufferPointer) {
        guard isRange(line) else { return }
        let now = ContinuousClock.now
        let done = state.withLock { s in
            s.written += 1
            if s.nextToMatch < s.sent.count {
                s.latencies.samples.append(Int((now - s.sent[s.nextToMatch]) / .microseconds(1)))
                s.nextToMatch += 1
            }
            return s.takeWaitersDone()
        }
        for waiter in done { waiter.resume() }
    }

    var written: Int { state.withLock { $0.written } }
    var latencies: Latencies { state.withLock { $0.latencies } }

    /// Returns once `count` range lines were written. Woken by the write itself, not by polling:
    /// a poll every 100 µs ran 10 pool wake-ups per notification at 1 000/s, counted in the CPU
    /// of whichever host was being measured.
    func waitForWritten(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s in
                guard s.written < count else { return true }
                s.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

func nodeBenchmarks() {
    Benchmark(
        "node: range notification -> stdout line, 100 peers, per 1000",
        configuration: .init(metrics: [.wallClock, .cpuTotal, .throughput], warmupIterations: 1, scalingFactor: .kilo, maxDuration: .seconds(10))
    ) { (benchmark: Benchmark, harness: (NodeHarness, LineClock, EventStream)) in
        let (node, clock, stream) = harness
        let target = clock.written + benchmark.scaledIterations.count
        benchmark.startMeasurement()
        // Notifications as one USB read each, at most 2 000 in flight (the transport queue is bounded).
        var round = UInt32(1_000_000 + clock.written)
        for index in benchmark.scaledIterations {
            if index % 2_000 == 0 { await clock.waitForWritten(target - benchmark.scaledIterations.count + index) }
            round &+= 1
            await node.fromDevice(Fixtures.notification(peer: index % 100, round: round / 100))
        }
        await clock.waitForWritten(target)
        benchmark.stopMeasurement()
        blackHole(stream)
    } setup: {
        let clock = LineClock()
        let stream = EventStream(output: NullOutput(observe: clock.wrote(utf8:)), includesRanges: true, bufferedLines: 4096)
        let node = try await NodeHarness(events: stream, rangingSessions: 128, maxPeers: 1_024)
        await node.connectPeers(100)
        return (node, clock, stream)
    }

    Benchmark(
        "node: notification bytes -> stdout write latency, 100 peers at 10 Hz",
        configuration: .init(
            metrics: [.custom("p50 (µs)"), .custom("p99 (µs)"), .custom("p99.9 (µs)"), .custom("max (µs)"), .custom("cpu per notification (µs)")],
            warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 1)
    ) { benchmark in
        let clock = LineClock()
        let stream = EventStream(output: NullOutput(observe: clock.wrote(utf8:)), includesRanges: true, bufferedLines: 4096)
        let node = try await NodeHarness(events: stream, rangingSessions: 128, maxPeers: 1_024)
        await node.connectPeers(100)
        let count = 20_000  // 20 s of 100 peers at 10 Hz: one notification every millisecond
        let start = ContinuousClock.now
        let cpu = Fixtures.cpuSeconds()
        for index in 0..<count {
            try await Task.sleep(until: start + .microseconds(1_000 * index), clock: .continuous)
            clock.sending()
            await node.fromDevice(Fixtures.notification(peer: index % 100, round: UInt32(index / 100 + 1)))
        }
        await clock.waitForWritten(count)
        let cpuPerNotification = (Fixtures.cpuSeconds() - cpu) / Double(count) * 1e6
        let latencies = clock.latencies
        benchmark.measurement(.custom("p50 (µs)"), latencies.percentile(50))
        benchmark.measurement(.custom("p99 (µs)"), latencies.percentile(99))
        benchmark.measurement(.custom("p99.9 (µs)"), latencies.percentile(99.9))
        benchmark.measurement(.custom("max (µs)"), latencies.percentile(100))
        benchmark.measurement(.custom("cpu per notification (µs)"), Int(cpuPerNotification.rounded()))
        await node.stop()
    }

    Benchmark(
        "node: advert -> peer table, 1000 known peers, per 1000",
        configuration: .init(metrics: [.wallClock, .cpuTotal, .throughput], warmupIterations: 1, scalingFactor: .kilo, maxDuration: .seconds(10))
    ) { (benchmark: Benchmark, node: NodeHarness) in
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations { node.air.deliver(advert(index % 1_000)) }
        await node.tracker.waitUntilIdle()
        benchmark.stopMeasurement()
    } setup: {
        let node = try await NodeHarness(events: EventStream(output: NullOutput { _ in }, includesRanges: false, bufferedLines: 4096), rangingSessions: 8, maxPeers: 1_024)
        for index in 0..<1_000 { node.air.deliver(advert(index)) }
        await node.tracker.waitUntilIdle()
        return node
    }
}

/// Peer `index`'s advert as the scanner reports it, from its own address.
func advert(_ index: Int) -> BLEEvent {
    let address = BLEAddress(bytes: [UInt8(index & 0xFF), UInt8(index >> 8), 0, 0, 0, 0xC0])
    return .advertisement(address, rssi: -70, data: Fixtures.advert(peer: PeerID(UInt64(index + 1)), uwbAddress: Fixtures.address(ofPeer: index)))
}

// MARK: Memory

func memoryBenchmarks() {
    Benchmark(
        "memory per tracked peer",
        configuration: .init(
            metrics: [.custom("bytes per peer, advert only", useScalingFactor: false), .custom("bytes per peer, ranging", useScalingFactor: false)],
            warmupIterations: 0, scalingFactor: .one, maxIterations: 1)
    ) { benchmark in
        let events = EventStream(output: NullOutput { _ in }, includesRanges: false, bufferedLines: 4096)
        // Growth of the resident set (what the machine pays, fragmentation included) per peer.
        // Tracked from adverts alone: the one ranging session goes to the first peer.
        let tracked = try await NodeHarness(events: events, rangingSessions: 1, maxPeers: 10_000)
        let before = Fixtures.residentBytes()
        for index in 0..<10_000 { tracked.air.deliver(advert(index)) }
        await tracked.tracker.waitUntilIdle()
        benchmark.measurement(.custom("bytes per peer, advert only", useScalingFactor: false), (Fixtures.residentBytes() - before) / 10_000)
        // Connected and ranging, after 20 rounds each.
        let ranging = try await NodeHarness(events: events, rangingSessions: 1_000, maxPeers: 1_000)
        let start = Fixtures.residentBytes()
        await ranging.connectPeers(1_000)
        for round in 1...20 {
            for peer in 0..<1_000 { await ranging.fromDevice(Fixtures.notification(peer: peer, round: UInt32(round))) }
            try await Task.sleep(for: .milliseconds(20))
        }
        await ranging.tracker.waitUntilIdle()
        benchmark.measurement(.custom("bytes per peer, ranging", useScalingFactor: false), (Fixtures.residentBytes() - start) / 1_000)
        await tracked.stop()
        await ranging.stop()
    }
}

// MARK: A 1000-peer event in the simulation

/// The rig's UWB transport, timing each read: when the bytes of each range notification reached
/// the host.
final class TimedTransport: UCITransport {
    private let inner: any UCITransport
    private let clock: LineClock
    private let decoder = Mutex(UCIStreamDecoder())
    var description: String { inner.description }

    init(_ inner: any UCITransport, clock: LineClock) {
        self.inner = inner
        self.clock = clock
    }

    func read() async throws -> [UInt8]? {
        guard let bytes = try await inner.read() else { return nil }
        let ranges = decoder.withLock { decoder in
            decoder.append(bytes)
            var count = 0
            while let message = try? decoder.next() {
                if case .rangeData? = try? UCINotification(message) { count += 1 }
            }
            return count
        }
        for _ in 0..<ranges { clock.sending() }
        return bytes
    }

    func write(_ bytes: [UInt8]) async throws { try await inner.write(bytes) }
    func close() { inner.close() }
}

func crowdBenchmark() {
    let seconds = Double(ProcessInfo.processInfo.environment["CROWD_SECONDS"] ?? "") ?? 600
    Benchmark(
        "crowd: 1000 visitors, one rig, \(Int(seconds)) simulated s",
        configuration: .init(
            metrics: [
                .custom("CPU ms per simulated s (all 1001 nodes)", useScalingFactor: false),
                .custom("rig p99 bytes -> write (µs)", useScalingFactor: false),
                .custom("rig max bytes -> write (µs)", useScalingFactor: false),
                .custom("range events shed", useScalingFactor: false), .custom("inputs shed", useScalingFactor: false),
                .custom("non-range events written", useScalingFactor: false),
                .custom("resident MB after 1/3", useScalingFactor: false), .custom("resident MB at end", useScalingFactor: false),
                .custom("simulated s per wall s", useScalingFactor: false),
            ],
            warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(3_600), maxIterations: 1)
    ) { benchmark in
        let clock = LineClock()
        let counts = Mutex<(nonRange: Int, shedRanges: Int, shedInputs: Int)>((0, 0, 0))
        let rigTag = Mutex<String>("")
        let output = NullOutput { line in
            if isRange(line) {
                if contains(line, rigTag.withLock { $0 }) { clock.wrote(utf8: line) }
                return
            }
            counts.withLock { c in
                c.nonRange += 1
                if contains(line, #""type":"stats""#) {
                    let stats = String(decoding: line, as: UTF8.self)
                    c.shedRanges += Int(field("shed_ranges", in: stats)) ?? 0
                    c.shedInputs += Int(field("shed_inputs", in: stats)) ?? 0
                }
            }
        }
        var options = SimulationDriver.Options()
        options.speed = nil
        options.instrument = { name, uwb, ble, _ in (name == "rig" ? TimedTransport(uwb, clock: clock) : uwb, ble) }
        var logger = Logger(label: "benchmark")
        logger.logLevel = .critical
        let stream = EventStream(output: output, includesRanges: true, bufferedLines: 4096)
        let driver = SimulationDriver(
            scenario: .crowd(visitors: 1_000, duration: seconds, seed: 7, bumpEvery: 50, sharedAir: false), options: options, events: stream,
            logger: logger)
        rigTag.withLock { $0 = #""node":""# + driver.identities["rig"]!.tag + #"""# }
        let world = driver.world
        let rss = Mutex<Int>(0)
        let cpu = Fixtures.cpuSeconds()
        let wall = ContinuousClock.now
        try await driver.run {
            if world.nowMilliseconds == Int64(seconds * 1000 / 3) { rss.withLock { $0 = Fixtures.residentBytes() } }
            return false
        }
        stream.drain()
        let elapsed = (ContinuousClock.now - wall) / .seconds(1)
        let c = counts.withLock { $0 }
        benchmark.measurement(.custom("CPU ms per simulated s (all 1001 nodes)", useScalingFactor: false), Int((Fixtures.cpuSeconds() - cpu) / seconds * 1000))
        benchmark.measurement(.custom("rig p99 bytes -> write (µs)", useScalingFactor: false), clock.latencies.percentile(99))
        benchmark.measurement(.custom("rig max bytes -> write (µs)", useScalingFactor: false), clock.latencies.percentile(100))
        benchmark.measurement(.custom("range events shed", useScalingFactor: false), c.shedRanges)
        benchmark.measurement(.custom("inputs shed", useScalingFactor: false), c.shedInputs)
        benchmark.measurement(.custom("non-range events written", useScalingFactor: false), c.nonRange)
        benchmark.measurement(.custom("resident MB after 1/3", useScalingFactor: false), rss.withLock { $0 } >> 20)
        benchmark.measurement(.custom("resident MB at end", useScalingFactor: false), Fixtures.residentBytes() >> 20)
        benchmark.measurement(.custom("simulated s per wall s", useScalingFactor: false), Int((seconds / elapsed).rounded()))
    }
}

/// Whether a rendered line is a `range` event.
func isRange(_ line: UnsafeRawBufferPointer) -> Bool {
    contains(line, #""type":"range""#)
}

/// A plain byte search: Foundation's `contains` bridges each line to NSString, and the standard
/// library's generic search looks up type metadata per call; either costs more than rendering
/// the line, which would make the benchmark measure itself.
func contains(_ haystack: UnsafeRawBufferPointer, _ pattern: String) -> Bool {
    var pattern = pattern
    return pattern.withUTF8 { needle in
        guard needle.count <= haystack.count else { return false }
        outer: for start in 0...(haystack.count - needle.count) {
            for offset in 0..<needle.count where haystack[start + offset] != needle[offset] { continue outer }
            return true
        }
        return false
    }
}

/// The integer after `"name":` in a rendered line.
func field(_ name: String, in line: String) -> Substring {
    guard let range = line.range(of: "\"\(name)\":") else { return "" }
    return line[range.upperBound...].prefix { $0.isNumber }
}
