import Synchronization

/// Reads a group's events back from a broker (`nearby-bridge tail --mqtt`): subscribes to
/// `<prefix>/<group or +>/+/+` with QoS 1 and hands over each event line once, however often the
/// broker delivered it (QoS 1 may repeat: duplicates are told by `node` + `seq`). Status topics
/// are left out: they are not events. The session outlives a disconnection by 10 minutes (MQTT 5
/// session expiry): what the rigs publish while this subscriber reconnects, or while the broker
/// restarts with persistence on, waits for it there.
package final class MQTTSubscriber: Sendable {
    private let client: MosquittoClient
    private let pattern: String
    private let stopping = StopFlag()

    /// - Parameter onLine: called on libmosquitto's thread, in arrival order.
    package init(settings: MQTTSettings, group: UInt16?, onLine: @escaping @Sendable (String) -> Void, onNotice: @escaping @Sendable (String) -> Void) throws {
        let endpoint = try settings.endpoint()
        let prefix = settings.topicPrefix ?? "nearby"
        let pattern = "\(prefix)/\(group.map(String.init) ?? "+")/+/+"
        self.pattern = pattern
        let seen = Mutex(SeenEvents())
        let stopping = self.stopping
        let relay = Mutex<MosquittoClient?>(nil)
        client = try MosquittoClient(
            settings: MQTTConnection(
                tls: endpoint.tls, host: endpoint.host, port: endpoint.port,
                clientID: settings.clientID ?? "nearby-bridge-tail-\(UInt32.random(in: 0...UInt32.max))",
                username: settings.username ?? endpoint.username, password: settings.password ?? endpoint.password,
                caFile: settings.caFile),
            will: nil, sessionExpirySeconds: 600
        ) { event in
            switch event {
            case .connected:
                // (Re)subscribe on every connection: a restarted broker forgets subscriptions.
                if relay.withLock({ $0 })?.subscribe(pattern, qos: 1) != true { onNotice("could not subscribe to \(pattern)") }
                onNotice("subscribed to \(pattern)")
            case .refused(let reason): onNotice("the broker refused the connection: \(reason)")
            case .disconnected(let reason):
                if !stopping.value.load(ordering: .relaxed) { onNotice("lost the broker (\(reason)); reconnecting") }
            case .message(let topic, let payload):
                guard !topic.hasSuffix("/status") else { return }
                let line = String(decoding: payload, as: UTF8.self)
                if seen.withLock({ $0.isNew(line) }) { onLine(line) }
            case .published: break
            }
        }
        relay.withLock { $0 = client }
    }

    package func start() throws { try client.start() }
    package func stop() {
        stopping.value.store(true, ordering: .relaxed)
        client.stop()
    }
}

/// Set once `stop` began: the disconnection that follows is not news.
private final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
