import Benchmark
import Events
import Glibc
import StreamIO
import WebView

/// The web view's cost to the node (issue 17): node throughput (the `node: range notification
/// -> stdout line` workload) with `--http` on and one browser reading `/events` over a real
/// socket, as a ratio to the same node without it, in one process and in alternating turns
/// (absolute figures move 2-3x between machines of the same kind).
func webViewBenchmark() {
    Benchmark(
        "node: web view overhead (one /events client), throughput ratio to off",
        configuration: .init(metrics: [.custom("ratio on/off (×100)")], warmupIterations: 0, scalingFactor: .one, maxIterations: 1)
    ) { benchmark in
        let turns = 3
        let count = 100_000
        var off: [Double] = []
        var on: [Double] = []
        for _ in 0..<turns {
            off.append(try await throughput(count: count, web: false))
            on.append(try await throughput(count: count, web: true))
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        let ratio = median(on) / median(off)
        print(
            """
            web view overhead, \(turns) turns of \(count) notifications each (100 peers), notifications/s:
              off: \(off.map { Int($0) })   on, one /events client: \(on.map { Int($0) })
              median on/off: \(String(format: "%.2f", ratio))
            """)
        benchmark.measurement(.custom("ratio on/off (×100)"), Int(ratio * 100))
    }
}

/// Notifications per second through a whole node, with or without the web view and its client.
private func throughput(count: Int, web: Bool) async throws -> Double {
    var server: WebServer?
    var client: EventsClient?
    var serving: Task<Void, any Error>?
    if web {
        let view = try WebServer(host: "127.0.0.1", port: 0, token: nil, thresholds: .default)
        serving = Task { try await view.run() }
        client = EventsClient(port: try await view.listeningPort())
        server = view
    }
    let rate = try await nodeThroughput(count: count, alongside: server.map { [$0.sink] } ?? [])
    client?.close()
    await server?.stop()
    serving?.cancel()
    return rate
}

/// Notifications per second through a whole node (100 connected peers, the `node: range
/// notification -> stdout line` workload) writing to stdout's sink on /dev/null, with `sinks`
/// beside it; the node is stopped before this returns.
func nodeThroughput(count: Int, alongside sinks: [any EventSink]) async throws -> Double {
    let clock = LineClock()
    let stdout = JSONLinesSink(output: NullOutput(observe: clock.wrote(utf8:)), includesRanges: true, bufferedLines: 4096)
    let node = try await NodeHarness(events: EventStream(sinks: [stdout] + sinks), rangingSessions: 128, maxPeers: 1_024)
    await node.connectPeers(100)
    let start = ContinuousClock.now
    let target = clock.written + count
    var round = UInt32(1_000_000)
    for index in 0..<count {
        if index % 2_000 == 0 { await clock.waitForWritten(target - count + index) }
        round &+= 1
        await node.fromDevice(Fixtures.notification(peer: index % 100, round: round / 100))
    }
    await clock.waitForWritten(target)
    let elapsed = ContinuousClock.now - start
    await node.stop()
    let (seconds, attoseconds) = elapsed.components
    return Double(count) / (Double(seconds) + Double(attoseconds) / 1e18)
}

/// A browser's `/events` connection, read as fast as the socket gives it on a thread of its own.
private final class EventsClient: Sendable {
    private let socketFD: Int32

    init(port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        socketFD = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let request = Array("GET /events HTTP/1.1\r\nHost: bench\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        IOThread.detach(name: "bench-sse") {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
            Glibc.close(fd)
        }
    }

    func close() { shutdown(socketFD, Int32(SHUT_RDWR)) }
}
