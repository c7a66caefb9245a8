import CMosquitto
import Synchronization

/// A thin typed wrapper over one libmosquitto client (Eclipse Mosquitto's C library, Debian
/// `libmosquitto1`): connection in the background with libmosquitto's own network thread and
/// reconnection, publishes, subscriptions, and what happens reported as `Event`s on that thread.
///
/// Why libmosquitto: the reference MQTT 3.1.1/5 client, maintained with the broker every
/// distribution ships, TLS and reconnection included; no Swift MQTT client is available here.
final class MosquittoClient: @unchecked Sendable {
    enum Event: Sendable {
        case connected
        /// The broker answered CONNACK with a refusal (bad credentials, not authorised...).
        case refused(String)
        /// The connection ended (the reason as libmosquitto words it); it is retried.
        case disconnected(String)
        case published(mid: Int32)
        case message(topic: String, payload: [UInt8])
    }

    private let handle: OpaquePointer
    private let settings: MQTTConnection
    private let sessionExpirySeconds: UInt32?
    private let onEvent: @Sendable (Event) -> Void

    private static let library: Void = { _ = mosquitto_lib_init() }()

    /// - Parameters:
    ///   - will: the retained message the broker publishes if we vanish.
    ///   - sessionExpirySeconds: keep the session (subscriptions, queued QoS 1 messages) on the
    ///     broker this long after a disconnection (MQTT 5); nil: a clean MQTT 3.1.1 session.
    init(
        settings: MQTTConnection, will: (topic: String, payload: String)?, sessionExpirySeconds: UInt32? = nil,
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws(MQTTError) {
        _ = Self.library
        self.settings = settings
        self.sessionExpirySeconds = sessionExpirySeconds
        self.onEvent = onEvent
        guard let handle = mosquitto_new(settings.clientID, sessionExpirySeconds == nil, nil) else { throw .client("mosquitto_new failed") }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, sessionExpirySeconds == nil ? MQTT_PROTOCOL_V311 : MQTT_PROTOCOL_V5)
        mosquitto_reconnect_delay_set(handle, 1, 10, true)
        if let username = settings.username {
            try check(mosquitto_username_pw_set(handle, username, settings.password), "credentials")
        }
        if settings.tls {
            try check(mosquitto_tls_set(handle, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil), "TLS")
        }
        if let will {
            try check(mosquitto_will_set(handle, will.topic, Int32(will.payload.utf8.count), will.payload, 1, true), "last will")
        }
        mosquitto_connect_callback_set(handle) { _, context, code in
            MosquittoClient.from(context).onEvent(code == 0 ? .connected : .refused(String(cString: mosquitto_connack_string(code))))
        }
        mosquitto_disconnect_callback_set(handle) { _, context, code in
            MosquittoClient.from(context).onEvent(.disconnected(String(cString: mosquitto_strerror(code))))
        }
        mosquitto_publish_callback_set(handle) { _, context, mid in
            MosquittoClient.from(context).onEvent(.published(mid: mid))
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
            MosquittoClient.from(context).onEvent(.message(topic: String(cString: topic), payload: payload))
        }
    }

    deinit { mosquitto_destroy(handle) }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MosquittoClient {
        Unmanaged<MosquittoClient>.fromOpaque(context!).takeUnretainedValue()
    }

    private func check(_ code: Int32, _ what: String) throws(MQTTError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else { throw .client("\(what): \(String(cString: mosquitto_strerror(code)))") }
    }

    /// Starts the network thread and the first connection attempt; a broker that is not there
    /// yet is tried again and again (1 s, doubling up to 10 s).
    func start() throws(MQTTError) {
        try check(mosquitto_loop_start(handle), "network thread")
        let code: Int32
        if let sessionExpirySeconds {
            // MQTT 5 connects with properties synchronously only (loopback or LAN: brief);
            // libmosquitto keeps them for its reconnections.
            var properties: OpaquePointer?
            defer { mosquitto_property_free_all(&properties) }
            _ = mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), sessionExpirySeconds)
            code = mosquitto_connect_bind_v5(handle, settings.host, Int32(settings.port), 30, nil, properties)
        } else {
            code = mosquitto_connect_async(handle, settings.host, Int32(settings.port), 30)
        }
        if code != MOSQ_ERR_SUCCESS.rawValue {
            // Refused at once (no broker listening): the network thread keeps reconnecting.
            onEvent(.disconnected(String(cString: mosquitto_strerror(code))))
        }
    }

    /// Publishes; the message id (its `published` event follows the broker's PUBACK for QoS 1,
    /// the send for QoS 0), or nil when libmosquitto refused it (not connected).
    func publish(topic: String, payload: String, qos: Int32, retain: Bool) -> Int32? {
        var mid: Int32 = 0
        let code = mosquitto_publish(handle, &mid, topic, Int32(payload.utf8.count), payload, qos, retain)
        return code == MOSQ_ERR_SUCCESS.rawValue ? mid : nil
    }

    func subscribe(_ pattern: String, qos: Int32) -> Bool {
        mosquitto_subscribe(handle, nil, pattern, qos) == MOSQ_ERR_SUCCESS.rawValue
    }

    /// Disconnects cleanly (no last will) and stops the network thread.
    func stop() {
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
    }
}

enum MQTTError: Error, CustomStringConvertible, Equatable {
    case client(String)
    case badURL(String)

    var description: String {
        switch self {
        case .client(let what): "MQTT client: \(what)"
        case .badURL(let url): "\(url) is not an MQTT URL: write mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (user and password may go before the host: mqtt://USER:PASSWORD@HOST)"
        }
    }
}
