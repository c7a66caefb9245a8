import Events
import Foundation
import Metrics
import Prometheus
import Synchronization

/// What `/metrics` says, in Prometheus's text format: counts derived from the event stream the
/// web view's sink sees (events by type, the last `seq`, what was shed, the latest `stats`
/// figures, each radio's state) and whatever the rest of the process records through
/// swift-metrics once `bootstrap` made this registry its backend (the UCI host's command
/// latency histogram and errors).
package final class BridgeMetrics: Sendable {
    package let registry = PrometheusCollectorRegistry()
    private let started = ContinuousClock.now
    /// The per-type counters, looked up once each: the registry's own lookup builds and hashes
    /// the name and labels, which on every `range` event cost the node most of its throughput.
    private let eventCounters = Mutex<[String: Prometheus.Counter]>([:])
    private let lastSeq: Prometheus.Gauge

    package init() {
        lastSeq = registry.makeGauge(name: "nearby_event_seq")
    }

    /// Makes this registry the process's swift-metrics backend (once per process).
    package func bootstrap() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(20), .milliseconds(50),
            .milliseconds(100), .milliseconds(200), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5),
        ]
        MetricsSystem.bootstrap(factory)
    }

    /// Counts `events`, the last of which carries line number `seq`.
    func record(_ events: [Event], lastSeq seq: UInt64) {
        eventCounters.withLock { counters in
            for event in events {
                let type = event.type
                if let counter = counters[type] {
                    counter.increment()
                } else {
                    let counter = registry.makeCounter(name: "nearby_events_total", labels: [("type", type)])
                    counters[type] = counter
                    counter.increment()
                }
            }
        }
        for event in events {
            switch event.body {
            case .device(let device):
                let up: Double = device.state == .ready || device.state == .active ? 1 : 0
                registry.makeGauge(name: "nearby_radio_up", labels: [("node", event.node), ("radio", device.radio.rawValue)]).set(up)
            case .stats(let stats):
                let node = [("node", event.node)]
                registry.makeGauge(name: "nearby_peers_tracked", labels: node).set(Double(stats.peers))
                registry.makeGauge(name: "nearby_peers_ranging", labels: node).set(Double(stats.ranging))
                registry.makeGauge(name: "nearby_session_budget", labels: node).set(Double(stats.budget))
                registry.makeCounter(name: "nearby_shed_ranges_total", labels: node).increment(by: Int64(stats.shedRanges))
                registry.makeCounter(name: "nearby_dropped_inputs_total", labels: node).increment(by: Int64(stats.shedInputs))
            default:
                break
            }
        }
        lastSeq.set(Double(seq))
    }

    /// The text `/metrics` serves.
    package func exposition() -> String {
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        registry.makeGauge(name: "nearby_uptime_seconds").set(Double(seconds) + Double(attoseconds) / 1e18)
        return registry.emitToString()
    }
}
