import Dispatch
import Events
import Glibc
import Logging
import StreamIO
import Synchronization

/// Publishes the event stream to an MQTT broker: every event to `<prefix>/<group>/<node>/<type>`,
/// its payload the JSON line stdout would carry (schema v1) with this destination's own `seq`,
/// which runs on across restarts (README "MQTT").
///
/// Nothing but `range` is lost when the broker goes away: every other event is appended to the
/// on-disk `EventSpool` first and published from there with QoS 1, a window at a time, in order;
/// a record leaves the spool once the broker acknowledged it and everything before it. After a
/// reconnection (or a restart of the rig) what was not acknowledged goes out again, so a
/// subscriber may see an event twice (QoS 1: at least once) and deduplicates by `node` + `seq`.
/// `range` events go straight out with `rangeQoS` (0) while connected and are shed otherwise,
/// counted per node for the `stats` event. The rig's state is a retained
/// `<prefix>/<group>/<node>/status` (`online` with its radios; the last will says `offline`).
///
/// stdout does not depend on any of this: `receive` only appends to a file and hands messages
/// to libmosquitto's queue, whose own thread talks to the broker.
///
/// Locking: libmosquitto calls back with its callback mutex held, and `mosquitto_publish` may
/// call back (QoS 0) on the publishing thread; so a callback never takes this sink's lock (that
/// deadlocked against a publish under it). It only queues what happened in `inbox` and wakes
/// the sink's thread ("mqtt"), which handles the queue under the lock, as `receive` does too.
package final class MQTTSink: EventSink {
    private struct State {
        var spool: EventSpool
        var connected = false
        /// Published and not yet acknowledged, in publishing order: mid, record end, acked.
        var inflight: [(mid: Int32, end: Int, acked: Bool)] = []
        var shed: [String: Int] = [:]
        /// Each node's radios (`uwb`/`ble` -> state), for the retained status.
        var radios: [String: [String: String]] = [:]
        var lastRefusal: String?
        var closed = false
        /// `drain`'s wait, signalled once the spool is acknowledged or the broker is gone.
        var drained: DispatchSemaphore?
    }

    private let state: Mutex<State>
    /// What libmosquitto reported, waiting for the lock.
    private let inbox = Inbox()
    private let client: MosquittoClient
    private let prefix: String
    private let group: UInt16
    private let statusNode: String
    private let rangeQoS: Int32
    private let logger: Logger
    /// Records handed to the broker at once before waiting for acknowledgements.
    static let window = 20

    /// - Parameters:
    ///   - node: the rig whose status topic carries the last will (the process's own node).
    ///   - defaultSpool: the spool directory unless the settings name one.
    package init(settings: MQTTSettings, group: UInt16, node: String, defaultSpool: String, logger: Logger) throws {
        let endpoint = try settings.endpoint()
        prefix = settings.topicPrefix ?? "nearby"
        self.group = group
        statusNode = node
        rangeQoS = Int32(settings.rangeQoS ?? 0)
        self.logger = logger
        let spool = try EventSpool(directory: settings.spoolDirectory ?? defaultSpool, limitBytes: settings.spoolLimitBytes ?? 64 << 20)
        if let damage = spool.damage { logger.error("\(damage)") }
        let pending = spool.pendingCount
        if pending > 0 { logger.notice("\(pending) events from an earlier run wait in the MQTT spool; they go out once the broker answers", metadata: ["spool": "\(spool.directory)"]) }
        state = Mutex(State(spool: spool))
        let connection = MQTTConnection(
            tls: endpoint.tls, host: endpoint.host, port: endpoint.port, clientID: settings.clientID ?? "nearby-bridge-\(node)",
            username: settings.username ?? endpoint.username, password: settings.password ?? endpoint.password, caFile: settings.caFile)
        let will = (topic: "\(prefix)/\(group)/\(node)/status", payload: #"{"state":"offline"}"#)
        let inbox = self.inbox
        client = try MosquittoClient(settings: connection, will: will) { inbox.post($0) }
        IOThread.detach(name: "mqtt") { [weak self, inbox] in
            // Woken by each report, by `drain` closing the sink, and by its deinit.
            while true {
                inbox.wake.wait()
                guard let sink = self else { return }
                let closed = sink.state.withLock { s in
                    if !s.closed { sink.handleInbox(&s) }
                    return s.closed
                }
                if closed { return }
            }
        }
        try client.start()
        logger.info("publishing events over MQTT", metadata: ["broker": "\(endpoint.host):\(endpoint.port)", "topics": "\(prefix)/\(group)/+/+"])
    }

    package var includesRanges: Bool { true }

    package func receive(_ events: [Event], timestampMilliseconds: Int64) {
        state.withLock { s in
            guard !s.closed else { return }
            handleInbox(&s)
            for event in events {
                let topic = "\(prefix)/\(group)/\(event.node)/\(event.type)"
                if event.isSheddable {
                    guard s.connected else {
                        s.shed[event.node, default: 0] += 1
                        continue
                    }
                    let line = Self.payload(event, seq: s.spool.takeSeq(), timestampMilliseconds: timestampMilliseconds)
                    _ = client.publish(topic: topic, payload: line, qos: rangeQoS, retain: false)
                    continue
                }
                let line = Self.payload(event, seq: s.spool.takeSeq(), timestampMilliseconds: timestampMilliseconds)
                do {
                    if try !s.spool.append(topic: topic, line: line) {
                        logger.error("the MQTT spool is full: an event is dropped", metadata: ["type": "\(event.type)", "spool": "\(s.spool.directory)"])
                    }
                } catch {
                    logger.error("\(error)")
                }
                if case .device(let device) = event.body {
                    s.radios[event.node, default: [:]][device.radio.rawValue] = device.state.rawValue
                    if s.connected { publishStatus(of: event.node, s) }
                }
            }
            pump(&s)
        }
    }

    /// The stdout line without its line feed: a message is already one event.
    private static func payload(_ event: Event, seq: UInt64, timestampMilliseconds: Int64) -> String {
        String(JSONLine.render(event, seq: seq, timestampMilliseconds: timestampMilliseconds).dropLast())
    }

    /// Hands the broker what the window allows. Called with the lock held: the PUBACK callback
    /// waits for it, so every message id is on record before its acknowledgement is handled.
    private func pump(_ s: inout State) {
        guard s.connected else { return }
        for record in s.spool.nextToSend(limit: Self.window - s.inflight.count) {
            guard let mid = client.publish(topic: record.topic, payload: record.line, qos: 1, retain: false) else {
                s.spool.rewind()
                s.inflight = []
                return
            }
            s.inflight.append((mid, record.end, false))
        }
    }

    private func publishStatus(of node: String, _ s: State) {
        let radios = (s.radios[node] ?? [:]).sorted { $0.key < $1.key }.map { #""\#($0.key)":"\#($0.value)""# }.joined(separator: ",")
        _ = client.publish(
            topic: "\(prefix)/\(group)/\(node)/status", payload: #"{"state":"online","radios":{\#(radios)}}"#, qos: 1, retain: true)
    }

    /// Handles what libmosquitto reported since the last time, then fills the window.
    private func handleInbox(_ s: inout State) {
        let events = inbox.events.withLock { events in
            defer { events = [] }
            return events
        }
        for event in events {
            switch event {
            case .connected:
                s.connected = true
                s.lastRefusal = nil
                logger.notice("connected to the MQTT broker", metadata: ["pending": "\(s.spool.pendingCount)"])
                for node in Set(s.radios.keys).union([statusNode]) { publishStatus(of: node, s) }
            case .refused(let reason):
                s.connected = false
                if s.lastRefusal != reason {
                    logger.error("the MQTT broker refused the connection: \(reason); events wait in the spool, stdout goes on")
                    s.lastRefusal = reason
                }
            case .disconnected(let reason):
                if s.connected {
                    logger.warning("lost the MQTT broker (\(reason)); events wait in the spool until it is back")
                }
                s.connected = false
                s.inflight = []
                s.spool.rewind()
            case .published(let mid):
                guard let index = s.inflight.firstIndex(where: { $0.mid == mid }) else { continue }  // QoS 0, or from before a reconnection
                s.inflight[index].acked = true
                var end: Int?
                var records = 0
                while let first = s.inflight.first, first.acked {
                    end = first.end
                    records += 1
                    s.inflight.removeFirst()
                }
                if let end { s.spool.acknowledge(upTo: end, records: records) }
            case .message:
                break
            }
        }
        pump(&s)
        if s.drained != nil, !s.connected || s.spool.pendingCount == 0 { s.drained.take()?.signal() }
    }

    package func takeShedRanges(node: String) -> Int {
        state.withLock { $0.shed.removeValue(forKey: node) ?? 0 }
    }

    package var queuedLines: Int { state.withLock { $0.spool.pendingCount } }

    /// Waits (5 s at most; woken by the acknowledgement that empties the spool, or by the loss of
    /// the broker) for the broker to acknowledge the spool, then says `offline` and disconnects. What is left stays in the spool for the next
    /// run: not lost, so not counted as unwritten.
    package func drain() -> DrainResult {
        let drained = DispatchSemaphore(value: 0)
        let waiting = state.withLock { s in
            guard s.connected, s.spool.pendingCount > 0 else { return false }
            s.drained = drained
            return true
        }
        if waiting { _ = drained.wait(timeout: .now() + .seconds(5)) }
        let pending = state.withLock { s in
            handleInbox(&s)
            s.drained = nil
            s.closed = true
            if s.connected {
                _ = client.publish(topic: "\(prefix)/\(group)/\(statusNode)/status", payload: #"{"state":"offline"}"#, qos: 1, retain: true)
            }
            return s.spool.pendingCount
        }
        inbox.wake.signal()
        client.stop()
        if pending > 0 { logger.notice("\(pending) events stay in the MQTT spool for the next run") }
        return DrainResult()
    }

    /// Ends the sink's thread if `drain` never did.
    deinit {
        inbox.wake.signal()
    }
}

/// libmosquitto's reports on their way to the sink's lock, and the signal that wakes its thread.
private final class Inbox: Sendable {
    let events = Mutex<[MosquittoClient.Event]>([])
    let wake = DispatchSemaphore(value: 0)

    func post(_ event: MosquittoClient.Event) {
        events.withLock { $0.append(event) }
        wake.signal()
    }
}
