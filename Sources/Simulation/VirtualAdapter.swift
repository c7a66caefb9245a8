import BLE

/// A BLE adapter on the world's virtual air: adverts with RSSI from distance, links with latency.
final class VirtualAdapter: BLEAdapter {
    private let world: World
    private let body: Int
    let backendName = "virtual"
    var boundAddresses: Bool { world.hasPrivacy(body: body) }

    init(world: World, body: Int) {
        self.world = world
        self.body = body
    }

    func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws {
        world.attachEndpoint(body: body, handler: events)
    }

    func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {
        world.advertise(body: body, data: data + scanResponse)
    }

    func startScanning() async throws {
        world.startScanning(body: body)
    }

    func connect(to peer: BLEAddress) throws -> LinkID {
        world.connect(from: body, to: peer)
    }

    func send(_ sdu: [UInt8], on link: LinkID) throws {
        try world.send(sdu, on: link, from: body)
    }

    func disconnect(_ link: LinkID) {
        world.disconnect(link, from: body)
    }

    func stop() async {
        world.detachEndpoint(body: body)
    }
}
