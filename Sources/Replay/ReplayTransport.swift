import BLE
import Bridge
import Synchronization
import UCI
import StreamIO
import UCIHost

/// Plays the board: each command the node sends is answered with the next recorded response to
/// the same command (matched by GID and OID, so a command the replay skips or adds does not
/// shift the rest); recorded notifications arrive when the driver delivers them.
final class ReplayTransport: UCITransport {
    private let responses: Mutex<[[UInt8]]>
    private let incoming = ByteQueue()
    private let tracker: WorkTracker
    /// Chunks the reader holds; its next `read` means they are fully handled.
    private let heldChunks = Atomic<Int>(0)
    let description: String

    init(responses: [[UInt8]], tracker: WorkTracker, description: String) {
        self.responses = Mutex(responses)
        self.tracker = tracker
        self.description = description
    }

    func write(_ bytes: [UInt8]) async throws {
        var offset = 0
        while offset < bytes.count, let (packet, used) = try? UCIPacket.parse(bytes[offset...]) {
            offset += used
            guard packet.messageType == .command, packet.isFinalSegment else { continue }
            let response = responses.withLock { list -> [UInt8]? in
                guard let index = list.firstIndex(where: { $0[0] & 0x0F == packet.groupID && $0[1] & 0x3F == packet.opcodeID }) else {
                    return nil
                }
                return list.remove(at: index)
            }
            if let response { deliver(response) }
        }
    }

    func deliver(_ bytes: [UInt8]) {
        tracker.begin()
        if !incoming.push(bytes) { tracker.end() }
    }

    func read() async throws -> [UInt8]? {
        let handled = heldChunks.exchange(0, ordering: .acquiringAndReleasing)
        if handled > 0 { tracker.end(handled) }
        guard let chunks = try await incoming.nextChunks() else { return nil }
        heldChunks.store(chunks.count, ordering: .releasing)
        return ByteQueue.concatenated(chunks)
    }

    func close() {
        incoming.finish()
    }
}
