import Bridge
import Synchronization
import StreamIO
import UCIHost

/// The host's end of a virtual UWBS inside this process. Host writes reach the world at once;
/// device bytes are queued and tracked, so the driver knows when the host has consumed them.
final class SimulatedTransport: UCITransport {
    private let world: World
    private let body: Int
    private let incoming = ByteQueue()
    private let tracker: WorkTracker?
    /// Chunks the reader holds; its next `read` means they are fully handled.
    private let heldChunks = Atomic<Int>(0)
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
        let handled = heldChunks.exchange(0, ordering: .acquiringAndReleasing)
        if handled > 0 { tracker?.end(handled) }
        guard let chunks = try await incoming.nextChunks() else { return nil }
        heldChunks.store(chunks.count, ordering: .releasing)
        return ByteQueue.concatenated(chunks)
    }

    func close() {
        world.detachDevice(body: body)
        incoming.finish()
    }
}
