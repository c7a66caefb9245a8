import Benchmark
import Bridge
import CLinux
import Events
import Foundation
import Glibc
import StreamIO
import Synchronization
import UCI

// MARK: A busy rig in real time: CPU per range notification against the host's physical limit

/// 1 000 range notifications per second (100 peers at 10 Hz) for 10 s, written by a "board"
/// thread into a socket at their real-time instants, through two hosts in turn:
///
/// - the node: a whole `BridgeNode` reading the socket through `StreamConnection` (a reader thread
///   in `read(2)`, as for a tty or TCP board), its UCI host, inbox, registry, proximity and the
///   buffered event stream writing lines to /dev/null;
/// - the baseline: one plain thread that reads the same bytes from the same kind of socket,
///   decodes only the session handle and the distance, and writes a short distance line to
///   /dev/null: what any host must at least do per notification (one wake-up, a read, a write).
///
/// CPU is the process's (user + system, `getrusage`) minus the board thread's own
/// (`CLOCK_THREAD_CPUTIME_ID`), so it is the host side alone, the benchmark's bookkeeping
/// (timestamps, latency matching) included in both. Latency: bytes handed to the socket → the
/// line's `write` returned.
func realTimeBenchmark() {
    Benchmark(
        "node: CPU per range notification at 1000/s, vs a minimal reader",
        configuration: .init(
            metrics: [
                .custom("node CPU per notification (ns)", useScalingFactor: false),
                .custom("node with a reader thread: CPU per notification (ns)", useScalingFactor: false),
                .custom("baseline CPU per notification (ns)", useScalingFactor: false),
                .custom("node p50 (µs)", useScalingFactor: false), .custom("node p99 (µs)", useScalingFactor: false),
                .custom("baseline p50 (µs)", useScalingFactor: false), .custom("baseline p99 (µs)", useScalingFactor: false),
                .custom("node context switches per 100 notifications", useScalingFactor: false),
                .custom("baseline context switches per 100 notifications", useScalingFactor: false),
                .custom("node / baseline CPU, median of turns (×100)", useScalingFactor: false),
                .custom("minimal reader doing the range path's work: CPU per notification (ns)", useScalingFactor: false),
                .custom("the same waiting in epoll_wait: CPU per notification (ns)", useScalingFactor: false),
            ],
            warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(120), maxIterations: 1)
    ) { benchmark in
        let environment = ProcessInfo.processInfo.environment
        let seconds = Int(environment["REALTIME_SECONDS"] ?? "") ?? 10
        let rounds = max(1, Int(environment["REALTIME_ROUNDS"] ?? "") ?? 5)
        let count = 1_000 * seconds / rounds
        // Unmeasured notifications first (3 s by default): the set-up's UCI commands each leave a
        // 2 s timeout timer that Dispatch fires even after the response cancelled it, and those
        // wake-ups belong to the set-up, not to the steady state this benchmark measures.
        let warmup = Int(environment["REALTIME_WARMUP"] ?? "") ?? 3_000
        // The node and the baseline take turns, `rounds` times: the machine's speed drifts by tens
        // of per cent over seconds on a shared VM, and alternating short turns lets both see the
        // same drift. Each figure is the median of its turns; the ratio, the median of each
        // turn's own ratio.
        var nodeTurns: [RealTimeResult] = []
        var baselineTurns: [RealTimeResult] = []
        var workTurns: [RealTimeResult] = []
        var epollTurns: [RealTimeResult] = []
        for _ in 0..<rounds {
            nodeTurns.append(try await measureNode(count: count, warmup: warmup, eventLoop: true))
            baselineTurns.append(try await measureBaseline(count: count, warmup: warmup, doingTheWork: false, waitingInEpoll: false))
            workTurns.append(try await measureBaseline(count: count, warmup: warmup, doingTheWork: true, waitingInEpoll: false))
            epollTurns.append(try await measureBaseline(count: count, warmup: warmup, doingTheWork: true, waitingInEpoll: true))
        }
        let handOff = environment["REALTIME_HANDOFF"] == "0" ? nodeTurns[0] : try await measureNode(count: count, warmup: warmup, eventLoop: false)
        let ratios = zip(nodeTurns, baselineTurns).map { $0.cpuPerNotification / $1.cpuPerNotification }
        let node = median(nodeTurns)
        let baseline = median(baselineTurns)
        // The range path's work done by the minimal reader itself (one thread, no event loop, no
        // core, no peers' state beyond proximity): about the least any node's ratio could be.
        let work = median(workTurns)
        let floors = zip(workTurns, baselineTurns).map { $0.cpuPerNotification / $1.cpuPerNotification }
        // The same reader waiting in `epoll_wait` before each `read`, as any host must that waits
        // for more than one thing (a board, an adapter, timers): the floor of an event loop.
        let epoll = median(epollTurns)
        let epollFloors = zip(epollTurns, baselineTurns).map { $0.cpuPerNotification / $1.cpuPerNotification }

        benchmark.measurement(.custom("node CPU per notification (ns)", useScalingFactor: false), Int(node.cpuPerNotification * 1e9))
        benchmark.measurement(.custom("baseline CPU per notification (ns)", useScalingFactor: false), Int(baseline.cpuPerNotification * 1e9))
        benchmark.measurement(
            .custom("node with a reader thread: CPU per notification (ns)", useScalingFactor: false), Int(handOff.cpuPerNotification * 1e9))
        benchmark.measurement(.custom("node p50 (µs)", useScalingFactor: false), node.latencies.percentile(50))
        benchmark.measurement(.custom("node p99 (µs)", useScalingFactor: false), node.latencies.percentile(99))
        benchmark.measurement(.custom("baseline p50 (µs)", useScalingFactor: false), baseline.latencies.percentile(50))
        benchmark.measurement(.custom("baseline p99 (µs)", useScalingFactor: false), baseline.latencies.percentile(99))
        benchmark.measurement(.custom("node context switches per 100 notifications", useScalingFactor: false), Int(node.switchesPerNotification * 100))
        benchmark.measurement(.custom("baseline context switches per 100 notifications", useScalingFactor: false), Int(baseline.switchesPerNotification * 100))
        benchmark.measurement(.custom("node / baseline CPU, median of turns (×100)", useScalingFactor: false), Int(medianOf(ratios) * 100))
        benchmark.measurement(
            .custom("minimal reader doing the range path's work: CPU per notification (ns)", useScalingFactor: false), Int(work.cpuPerNotification * 1e9))
        benchmark.measurement(
            .custom("the same waiting in epoll_wait: CPU per notification (ns)", useScalingFactor: false), Int(epoll.cpuPerNotification * 1e9))

        func row(_ name: String, _ value: Double, _ base: Double, _ unit: String) -> String {
            let ratio = base > 0 ? String(format: "%.1f×", value / base) : "-"
            return name.padding(toLength: 34, withPad: " ", startingAt: 0)
                + String(format: "%10.1f %@ %10.1f %@   %@", value, unit, base, unit, ratio)
        }
        print("""

            \(rounds) turns each of \(count) range notifications at 1000/s (after \(warmup) unmeasured), node (its event loop reads the socket) vs minimal reader, medians:
            \("".padding(toLength: 34, withPad: " ", startingAt: 0))      node          baseline     ratio
            \(row("CPU per notification", node.cpuPerNotification * 1e6, baseline.cpuPerNotification * 1e6, "µs"))
            \(row("latency p50", Double(node.latencies.percentile(50)), Double(baseline.latencies.percentile(50)), "µs"))
            \(row("latency p99", Double(node.latencies.percentile(99)), Double(baseline.latencies.percentile(99)), "µs"))
            \(row("latency max", Double(node.latencies.percentile(100)), Double(baseline.latencies.percentile(100)), "µs"))
            \(row("context switches per notification", node.switchesPerNotification, baseline.switchesPerNotification, "  "))
            CPU ratio, median of the turns: \(String(format: "%.2f×", medianOf(ratios))) (turns: \(ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ")); node µs: \(nodeTurns.map { String(format: "%.1f", $0.cpuPerNotification * 1e6) }.joined(separator: ", ")); baseline µs: \(baselineTurns.map { String(format: "%.1f", $0.cpuPerNotification * 1e6) }.joined(separator: ", ")))
            the minimal reader doing the range path's work (decode, proximity, the node's JSON line), i.e. about the least a node could cost:
            \(row("CPU per notification", work.cpuPerNotification * 1e6, baseline.cpuPerNotification * 1e6, "µs"))
            CPU ratio, median of the turns: \(String(format: "%.2f×", medianOf(floors))) (turns: \(floors.map { String(format: "%.2f", $0) }.joined(separator: ", ")))
            the same reader doing the work, waiting in epoll_wait before each read (as any host waiting for more than one thing):
            \(row("CPU per notification", epoll.cpuPerNotification * 1e6, baseline.cpuPerNotification * 1e6, "µs"))
            CPU ratio, median of the turns: \(String(format: "%.2f×", medianOf(epollFloors))) (turns: \(epollFloors.map { String(format: "%.2f", $0) }.joined(separator: ", ")))
            the same node with a reader thread handing bytes to the global pool (no event loop):
            \(row("CPU per notification", handOff.cpuPerNotification * 1e6, baseline.cpuPerNotification * 1e6, "µs"))
            \(row("latency p99", Double(handOff.latencies.percentile(99)), Double(baseline.latencies.percentile(99)), "µs"))
            \(row("context switches per notification", handOff.switchesPerNotification, baseline.switchesPerNotification, "  "))
            (board thread's own CPU, excluded above: node run \(String(format: "%.1f", node.boardCPU * 1e6 / Double(count))) µs, baseline run \(String(format: "%.1f", baseline.boardCPU * 1e6 / Double(count))) µs per notification)
            CPU per notification by thread (schedstat), node: \(node.threads)
            CPU per notification by thread (schedstat), node with a reader thread: \(handOff.threads)
            CPU per notification by thread (schedstat), baseline: \(baseline.threads)

            """)
    }
}

/// CPU nanoseconds of each of the process's threads so far (`/proc/self/task/*/schedstat`), with
/// the thread's name.
func threadTimes() -> [Int32: (name: String, nanoseconds: Int)] {
    var result: [Int32: (name: String, nanoseconds: Int)] = [:]
    guard let dir = opendir("/proc/self/task") else { return result }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let tid = Int32(name) else { continue }
        let stat = readSmallFile("/proc/self/task/\(tid)/schedstat").split(separator: " ")
        let comm = readSmallFile("/proc/self/task/\(tid)/comm").trimmingCharacters(in: .whitespacesAndNewlines)
        result[tid] = (comm, stat.first.flatMap { Int($0) } ?? 0)
    }
    return result
}

func readSmallFile(_ path: String) -> String {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = read(fd, &buffer, buffer.count)
    return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
}

/// Names thread `tid` of this process (for the per-thread breakdown, `top -H`, `perf`).
func nameThread(_ tid: Int32, _ name: String) {
    let fd = open("/proc/self/task/\(tid)/comm", O_WRONLY)
    guard fd >= 0 else { return }
    _ = name.withCString { write(fd, $0, strlen($0)) }
    close(fd)
}

/// CPU per notification by thread name between two `threadTimes()` snapshots, largest first;
/// Swift's cooperative pool threads (Dispatch's "…qos…" workers) and the unnamed main thread
/// are summed as "pool/other", named threads (the transport's reader, the stdout writer, the
/// benchmark's own) stand alone.
func perThread(from before: [Int32: (name: String, nanoseconds: Int)], to after: [Int32: (name: String, nanoseconds: Int)], count: Int) -> String {
    var byName: [String: Int] = [:]
    for (tid, now) in after {
        let spent = now.nanoseconds - (before[tid]?.nanoseconds ?? 0)
        let name = now.name.contains("qos") || now.name == "BridgeBenchmark" ? "pool/other" : now.name
        byName[name, default: 0] += spent
    }
    return byName.sorted { $0.value > $1.value }
        .map { String(format: "%@ %.1f µs", $0.key, Double($0.value) / 1_000 / Double(count)) }.joined(separator: ", ")
}

func medianOf(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// The turn with the median CPU per notification (its latencies and threads come with it).
func median(_ turns: [RealTimeResult]) -> RealTimeResult {
    turns.sorted { $0.cpuPerNotification < $1.cpuPerNotification }[(turns.count - 1) / 2]
}

struct RealTimeResult {
    var cpuPerNotification: Double
    var switchesPerNotification: Double
    var latencies: Latencies
    var boardCPU: Double
    var threads: String
}

/// Process CPU seconds and context switches (voluntary + involuntary, all threads).
private func processUsage() -> (cpu: Double, switches: Int) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return (seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_nvcsw + usage.ru_nivcsw)
}

private func threadCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// Runs `body(index)` for `0..<count` on a thread of its own, each at `index` milliseconds after
/// the start (absolute sleeps, so late wake-ups do not accumulate), and returns when done.
/// `measure(index)` is called once, before `body(warmup)`. Returns the thread's CPU seconds from
/// `warmup` on.
private func board(count: Int, warmup: Int, measure: @escaping @Sendable () -> Void, body: @escaping @Sendable (Int) -> Void) async -> Double {
    await withCheckedContinuation { (done: CheckedContinuation<Double, Never>) in
        final class Job: @unchecked Sendable {
            let run: () -> Void
            init(_ run: @escaping () -> Void) { self.run = run }
        }
        let job = Job {
            var start = timespec()
            clock_gettime(CLOCK_MONOTONIC, &start)
            var cpuAtWarmup = 0.0
            for index in 0..<(warmup + count) {
                let at = Int(start.tv_nsec) + index * 1_000_000
                var next = timespec(tv_sec: start.tv_sec + at / 1_000_000_000, tv_nsec: at % 1_000_000_000)
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil) == EINTR {}
                if index == warmup {
                    measure()
                    cpuAtWarmup = threadCPUSeconds()
                }
                body(index)
            }
            done.resume(returning: threadCPUSeconds() - cpuAtWarmup)
        }
        IOThread.detach(name: "nb-board") { job.run() }
    }
}

/// The process's usage when the measured part began.
final class Window: Sendable {
    private let usage = Mutex<(cpu: Double, switches: Int)>((0, 0))
    func begin() { usage.withLock { $0 = processUsage() } }
    var begun: (cpu: Double, switches: Int) { usage.withLock { $0 } }
}

private func measureNode(count: Int, warmup: Int, eventLoop: Bool) async throws -> RealTimeResult {
    let clock = LineClock()
    let stream = EventStream(output: NullOutput(observe: clock.wrote(utf8:)), includesRanges: true, bufferedLines: 4096)
    let harness = try await NodeHarness(
        events: stream, rangingSessions: 128, maxPeers: 1_024, overSocket: true, eventLoop: eventLoop)
    await harness.connectPeers(100)
    let device = harness.socketDevice!
    let notifications = Fixtures.notificationStream(peers: 100, rounds: (warmup + count) / 100 + 1)
    let window = Window()
    let threadsAtStart = Mutex<[Int32: (name: String, nanoseconds: Int)]>([:])
    let boardCPU = await board(count: count, warmup: warmup, measure: { window.begin(); device.commands.withLock { $0 = [:] }; threadsAtStart.withLock { $0 = threadTimes() } }) { index in
        clock.sending()
        device.send(notifications[index])
    }
    await clock.waitForWritten(warmup + count)
    let end = processUsage()
    let threads = perThread(from: threadsAtStart.withLock { $0 }, to: threadTimes(), count: count)
    let begun = window.begun
    let commands = device.commands.withLock { $0 }
    if !commands.isEmpty {
        print("UCI commands the node sent while measured: " + commands.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    }
    await harness.stop()
    var latencies = clock.latencies
    latencies.samples.removeFirst(warmup)
    return RealTimeResult(
        cpuPerNotification: (end.cpu - begun.cpu - boardCPU) / Double(count),
        switchesPerNotification: Double(end.switches - begun.switches) / Double(count), latencies: latencies, boardCPU: boardCPU,
        threads: threads)
}

/// The session handle and distance of a two-way SESSION_INFO_NTF with one short-address
/// measurement (UCI 2.0 layout), or nil for anything else.
@inline(__always)
private func distanceOf(_ frame: UnsafeRawBufferPointer) -> (session: UInt32, centimetres: UInt16)? {
    // Header: MT=3 (notification) GID=2 (session control), OID 0 (SESSION_INFO_NTF), RFU, length.
    guard frame.count >= 4 + 33, frame[0] == 0x62, frame[1] == 0x00 else { return nil }
    let session = frame.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
    let centimetres = frame.loadUnaligned(fromByteOffset: 4 + 29, as: UInt16.self).littleEndian
    return (session, centimetres)
}

/// The minimal reader's turn; `doingTheWork`: it also does the range path's work (`RangePathWork`)
/// and writes the node's line instead of its short one; `waitingInEpoll`: it waits in
/// `epoll_wait` for the socket before each `read` instead of blocking in the `read`.
private func measureBaseline(count: Int, warmup: Int, doingTheWork: Bool, waitingInEpoll: Bool) async throws -> RealTimeResult {
    let notifications = Fixtures.notificationStream(peers: 100, rounds: (warmup + count) / 100 + 1)
    // The decoder below must agree with the real one on the fixture.
    var decoder = UCIStreamDecoder()
    for bytes in notifications.prefix(200) {
        decoder.append(bytes)
        guard case .rangeData(let data)? = try decoder.next().map(UCINotification.init),
            let decoded = bytes.withUnsafeBytes({ distanceOf($0) })
        else { fatalError("fixture is not a two-way SESSION_INFO_NTF") }
        precondition(decoded.session == data.session && decoded.centimetres == data.measurements[0].distanceCentimetres)
    }
    let clock = LineClock()
    var fds: [Int32] = [0, 0]
    precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
    let (hostFD, boardFD) = (fds[0], fds[1])
    let null = open("/dev/null", O_WRONLY)
    let reader = MinimalReader(
        fd: hostFD, output: null, clock: clock, work: doingTheWork ? RangePathWork(peers: 100) : nil, waitingInEpoll: waitingInEpoll)
    reader.start()
    let window = Window()
    let threadsAtStart = Mutex<[Int32: (name: String, nanoseconds: Int)]>([:])
    let boardCPU = await board(count: count, warmup: warmup, measure: { window.begin(); threadsAtStart.withLock { $0 = threadTimes() } }) { index in
        clock.sending()
        notifications[index].withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = send(boardFD, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent > 0 { offset += sent } else if errno != EINTR { return }
            }
        }
    }
    await clock.waitForWritten(warmup + count)
    let end = processUsage()
    let threads = perThread(from: threadsAtStart.withLock { $0 }, to: threadTimes(), count: count)
    let begun = window.begun
    shutdown(boardFD, Int32(SHUT_RDWR))
    var latencies = clock.latencies
    latencies.samples.removeFirst(warmup)
    return RealTimeResult(
        cpuPerNotification: (end.cpu - begun.cpu - boardCPU) / Double(count),
        switchesPerNotification: Double(end.switches - begun.switches) / Double(count), latencies: latencies, boardCPU: boardCPU,
        threads: threads)
}

/// The baseline host: one thread, a fixed buffer, `read` → distance → `write`; or, given the
/// range path's `work`, `read` → that work → its line → `write`; `waitingInEpoll`, an
/// `epoll_wait` for the socket before each `read`.
final class MinimalReader: @unchecked Sendable {
    let fd: Int32
    let output: Int32
    let clock: LineClock
    let waitingInEpoll: Bool
    /// Only the reader's thread touches it.
    private var work: RangePathWork?

    init(fd: Int32, output: Int32, clock: LineClock, work: RangePathWork?, waitingInEpoll: Bool) {
        self.fd = fd
        self.output = output
        self.clock = clock
        self.work = work
        self.waitingInEpoll = waitingInEpoll
    }

    func start() {
        IOThread.detach(name: "nb-baseline-reader") { [self] in loop() }
    }

    private func loop() {
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        let line = UnsafeMutableRawBufferPointer.allocate(byteCount: 128, alignment: 8)
        var filled = 0
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        defer { close(epoll) }
        var watched = epoll_event()
        watched.events = EPOLLIN.rawValue
        precondition(epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &watched) == 0)
        var ready = epoll_event()
        while true {
            if waitingInEpoll, epoll_wait(epoll, &ready, 1, -1) < 0 { continue }
            let got = read(fd, input.baseAddress! + filled, input.count - filled)
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return }
            filled += got
            var at = 0
            // Whole frames only; a partial one waits for the next read.
            while filled - at >= 4 {
                let length = 4 + Int(input[at + 3])
                guard filled - at >= length else { break }
                let frame = UnsafeRawBufferPointer(rebasing: input[at..<(at + length)])
                if work != nil {
                    if work!.run(frame) > 0 {
                        _ = work!.line.withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
                        clock.wrote(Self.rangeMarker)
                    }
                } else if let (session, centimetres) = distanceOf(frame) {
                    let size = Self.render(session: session, centimetres: centimetres, into: line)
                    _ = write(output, line.baseAddress, size)
                    clock.wrote(Self.rangeMarker)
                }
                at += length
            }
            input.copyMemory(from: UnsafeRawBufferPointer(rebasing: input[at..<filled]))
            filled -= at
        }
    }

    /// What `LineClock` counts as a range line.
    static let rangeMarker = #"{"type":"range"}"#

    /// `{"session":N,"distance":D.DD}\n` without allocating.
    private static func render(session: UInt32, centimetres: UInt16, into out: UnsafeMutableRawBufferPointer) -> Int {
        var n = 0
        func put(_ byte: UInt8) {
            out[n] = byte
            n += 1
        }
        func put(_ text: StaticString) { text.withUTF8Buffer { for b in $0 { put(b) } } }
        func put(digits value: UInt64, minimum: Int = 1) {
            var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var count = 0
            var rest = value
            withUnsafeMutableBytes(of: &digits) { d in
                repeat {
                    d[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                    count += 1
                } while rest > 0 || count < minimum
                for i in stride(from: count - 1, through: 0, by: -1) { put(d[i]) }
            }
        }
        put(#"{"session":"#)
        put(digits: UInt64(session))
        put(#","distance":"#)
        put(digits: UInt64(centimetres / 100))
        put(UInt8(ascii: "."))
        put(digits: UInt64(centimetres % 100), minimum: 2)
        put("}\n")
        return n
    }
}
