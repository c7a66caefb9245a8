import GATTServer
import Synchronization

/// The GATT side of the virtual air: rigs that serve their GATT database to phones, and the
/// emulated phones' connections to them. A phone connects to a serving rig within BLE range,
/// subscribes and writes; the rig's node hears each as a `GATTClientEvent`, as it would from
/// either real backend, and its notifications reach the phone only while it is subscribed. A
/// connection breaks when its ends move out of BLE range; both sides then hear it closed.
///
/// Traffic waits in per-body inboxes that the driver empties in the bodies' turns, so a seeded
/// world runs the same way every time.
package final class GATTAir: Sendable {
    /// What a phone hears from the rig it is connected to.
    enum PhoneDelivery: Equatable {
        case notification(characteristic: GATTUUID, value: [UInt8])
        /// The connection broke (out of range) or the rig stopped serving.
        case disconnected
    }

    private struct Server {
        var database: GATTDatabase
        var inbox: [GATTClientEvent] = []
    }

    private struct Connection {
        var phone: Int
        var rig: Int
        var subscribed: Set<GATTUUID> = []
    }

    private struct State {
        var servers: [Int: Server] = [:]
        var connections: [GATTClient: Connection] = [:]
        var phoneInboxes: [Int: [PhoneDelivery]] = [:]
        var connectionsMade = 0
    }

    private let world: World
    private let state = Mutex(State())

    init(world: World) {
        self.world = world
    }

    /// Makes `rig` serve `database` (its clients' events wait for `take(rig:)`). Returns the
    /// node's GATT backend.
    func serve(rig: Int, database: GATTDatabase) -> VirtualGATTServer {
        state.withLock { $0.servers[rig] = Server(database: database) }
        return VirtualGATTServer(air: self, rig: rig)
    }

    /// The serving rigs within BLE range of `phone` now, nearest first, with their databases.
    func servers(near phone: Int) -> [(rig: Int, database: GATTDatabase)] {
        let now = world.nowMilliseconds
        let servers = state.withLock { $0.servers.map { ($0.key, $0.value.database) } }
        return servers.map { (rig: $0.0, database: $0.1, distance: world.distance(between: phone, and: $0.0, at: now)) }
            .filter { $0.distance <= world.radio.bleRange }
            .sorted { ($0.distance, $0.rig) < ($1.distance, $1.rig) }
            .map { ($0.rig, $0.database) }
    }

    /// Opens a connection from `phone` to `rig`; nil if the rig serves nothing or is out of range.
    func connect(phone: Int, to rig: Int) -> GATTClient? {
        let now = world.nowMilliseconds
        guard world.distance(between: phone, and: rig, at: now) <= world.radio.bleRange else { return nil }
        return state.withLock { s in
            guard s.servers[rig] != nil else { return nil }
            s.connectionsMade += 1
            let client = GATTClient("world:\(world.scenario.nodes[phone].name)#\(s.connectionsMade)")
            s.connections[client] = Connection(phone: phone, rig: rig)
            return client
        }
    }

    /// The phone writes `value` to `characteristic` (a Write Request). False if the connection is
    /// gone or the rig's database has no such characteristic (the ATT error a real server answers).
    func write(_ value: [UInt8], to characteristic: GATTUUID, on client: GATTClient) -> Bool {
        state.withLock { s in
            guard let connection = s.connections[client], let found = s.servers[connection.rig]?.database.characteristic(characteristic),
                found.definition.properties.contains(.write)
            else { return false }
            s.servers[connection.rig]?.inbox.append(
                .client(client, .write(characteristic: characteristic, valueHandle: found.valueHandle, value: value, withResponse: true)))
            return true
        }
    }

    /// The phone writes its client characteristic configuration: notifications of
    /// `characteristic` on. False if the connection is gone or it cannot notify.
    func subscribe(to characteristic: GATTUUID, on client: GATTClient) -> Bool {
        state.withLock { s in
            guard let connection = s.connections[client], let found = s.servers[connection.rig]?.database.characteristic(characteristic),
                found.configurationHandle != nil
            else { return false }
            s.connections[client]?.subscribed.insert(characteristic)
            s.servers[connection.rig]?.inbox.append(.client(client, .subscription(characteristic: characteristic, .notifications)))
            return true
        }
    }

    /// The phone ends its connection; the rig hears it closed.
    func disconnect(_ client: GATTClient) {
        state.withLock { s in
            guard let connection = s.connections.removeValue(forKey: client) else { return }
            s.servers[connection.rig]?.inbox.append(.closed(client))
        }
    }

    /// The rig serves no more: its connections end, and the phones hear it.
    func stopServing(rig: Int) {
        state.withLock { s in
            s.servers[rig] = nil
            for client in s.connections.keys.sorted() where s.connections[client]!.rig == rig {
                s.phoneInboxes[s.connections.removeValue(forKey: client)!.phone, default: []].append(.disconnected)
            }
        }
    }

    /// The rig's notification: to the phone if it is connected and subscribed, else dropped (as
    /// the real backends drop one for a client that left or never subscribed).
    func notify(from rig: Int, _ client: GATTClient, characteristic: GATTUUID, value: [UInt8]) {
        state.withLock { s in
            guard let connection = s.connections[client], connection.rig == rig, connection.subscribed.contains(characteristic) else { return }
            s.phoneInboxes[connection.phone, default: []].append(.notification(characteristic: characteristic, value: value))
        }
    }

    /// Breaks the connections whose ends are out of BLE range now.
    func advance() {
        let now = world.nowMilliseconds
        state.withLock { s in
            for client in s.connections.keys.sorted() {
                let connection = s.connections[client]!
                guard world.distance(between: connection.phone, and: connection.rig, at: now) > world.radio.bleRange else { continue }
                s.connections[client] = nil
                s.servers[connection.rig]?.inbox.append(.closed(client))
                s.phoneInboxes[connection.phone, default: []].append(.disconnected)
            }
        }
    }

    /// What the rig's clients did since its last turn.
    func take(rig: Int) -> [GATTClientEvent] {
        state.withLock { s in
            defer { s.servers[rig]?.inbox = [] }
            return s.servers[rig]?.inbox ?? []
        }
    }

    /// What the phone heard since its last turn.
    func take(phone: Int) -> [PhoneDelivery] {
        state.withLock { $0.phoneInboxes.removeValue(forKey: phone) ?? [] }
    }
}
