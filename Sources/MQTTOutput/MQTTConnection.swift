/// The settings resolved for one client.
struct MQTTConnection: Sendable {
    var tls: Bool
    var host: String
    var port: Int
    var clientID: String
    var username: String?
    var password: String?
    var caFile: String?
}
