import Bridge
import Synchronization
import UCIHost

/// The host's end of a virtual UWBS inside this process. Host writes reach the world at once;
/// device bytes are queued and tracked, so the driver knows when the host has consumed them.
final class SimulatedTransport: UCITransport {
    private let world: World
    private let body: Int
    private let incoming = ByteQueue()
    private let tracker: WorkTracker?
    /// True while the reader holds a chunk; its next `read` means that chunk is fully handled.
    private let holdingChunk = Atomic<Bool>(false)
    let description: String

    init(world: World, body: Int, tracker: WorkTracker?) {
        self.world = world
        self.body = body
        self.tracker = tracker
        self.description = "virtual:\(world.scenario.nodes[body].name)"
        world.attachDevice(body: body) { [incoming, tracker] bytes in
            tracker?.begin()
            if !incoming.push(bytes) { tracker?.end() }
        }
    }

    func write(_ bytes: [UInt8]) async throws {
        world.deviceInput(body: body, bytes: bytes)
    }

    func read() async throws -> [UInt8]? {
        if holdingChunk.exchange(false, ordering: .acquiringAndReleasing) { tracker?.end() }
        let chunk = try await incoming.next()
        if chunk != nil { holdingChunk.store(true, ordering: .releasing) }
        return chunk
    }

    func close() {
        world.detachDevice(body: body)
        incoming.finish()
    }
}
