import Benchmark
import Events
import Foundation
import Logging
import MQTTOutput

/// The MQTT output's cost to the node (issue 18): node throughput (the `node: range notification
/// -> stdout line` workload, every event a `range`, published with QoS 0) with `--mqtt` to a
/// real Mosquitto broker on loopback, as a ratio to stdout alone, in one process and in
/// alternating turns. Needs Debian's `mosquitto` (scripts/bootstrap --python installs it).
func mqttBenchmark() {
    Benchmark(
        "node: MQTT overhead (Mosquitto on loopback), throughput ratio to stdout alone",
        configuration: .init(metrics: [.custom("ratio mqtt/stdout (×100)")], warmupIterations: 0, scalingFactor: .one, maxIterations: 1)
    ) { benchmark in
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let turns = 3
        let count = 100_000
        var alone: [Double] = []
        var published: [Double] = []
        for turn in 0..<turns {
            alone.append(try await throughput(count: count, mqtt: nil))
            published.append(try await throughput(count: count, mqtt: (broker.url, "\(NSTemporaryDirectory())nb-bench-spool-\(turn)")))
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        let ratio = median(published) / median(alone)
        print(
            """
            MQTT overhead, \(turns) turns of \(count) notifications each (100 peers), notifications/s:
              stdout alone: \(alone.map { Int($0) })   stdout + MQTT: \(published.map { Int($0) })
              median mqtt/stdout: \(String(format: "%.2f", ratio))
            """)
        benchmark.measurement(.custom("ratio mqtt/stdout (×100)"), Int(ratio * 100))
    }
}

/// Notifications per second through a whole node, with or without the MQTT output.
private func throughput(count: Int, mqtt: (url: String, spool: String)?) async throws -> Double {
    let sink = try mqtt.map { mqtt in
        try MQTTSink(
            settings: MQTTSettings(url: mqtt.url), group: 1, node: "bench", defaultSpool: mqtt.spool,
            logger: Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() }))
    }
    if sink != nil { try await Task.sleep(for: .milliseconds(300)) }  // connected before the clock starts
    let rate = try await nodeThroughput(count: count, alongside: sink.map { [$0] } ?? [])
    _ = sink?.drain()
    if let spool = mqtt?.spool { try? FileManager.default.removeItem(atPath: spool) }
    return rate
}

/// Debian's Mosquitto broker on a free loopback port, for the benchmark's lifetime.
private final class MosquittoBroker {
    let url: String
    private let process = Process()

    init() throws {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length); return getsockname(probe, $0, &length) }
        }
        let port = UInt16(bigEndian: address.sin_port)
        close(probe)
        url = "mqtt://127.0.0.1:\(port)"
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-p", "\(port)"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 0.5)
    }

    /// SIGKILL: the benchmark runner's child inherits a signal mask in which SIGTERM may be blocked.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
