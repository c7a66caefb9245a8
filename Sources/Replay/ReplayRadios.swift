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

/// Plays the Bluetooth adapter: recorded events are delivered by the driver; the node's own
/// connection attempts get the link ids they got when recorded; what it sends goes nowhere.
final class ReplayAdapter: BLEAdapter {
    private let handler = CallbackSlot<BLEEvent>()
    private let localLinks: Mutex<[LinkID]>
    /// The first frame the node sent on each link when recorded, until the replay sends its own;
    /// and the first link on which they differed.
    private let expectedFirst: Mutex<(frames: [LinkID: [UInt8]], differs: LinkID?)>
    let backendName: String

    init(localLinks: [LinkID], firstSent: [LinkID: [UInt8]], backendName: String) {
        self.localLinks = Mutex(localLinks)
        self.expectedFirst = Mutex((firstSent, nil))
        self.backendName = backendName
    }

    /// The first link on which the replayed node's first frame differed from the recorded one.
    var divergedLink: LinkID? { expectedFirst.withLock { $0.differs } }

    func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws { handler.install(events) }
    func deliver(_ event: BLEEvent) { handler(event) }
    func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {}
    func startScanning() async throws {}

    func connect(to peer: BLEAddress) throws -> LinkID {
        guard let link = localLinks.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            throw BLEAdapterError.disconnected("the capture has no more connections from this node")
        }
        return link
    }

    func send(_ sdu: [UInt8], on link: LinkID) throws {
        expectedFirst.withLock { expected in
            guard let recorded = expected.frames.removeValue(forKey: link), recorded != sdu, expected.differs == nil else { return }
            expected.differs = link
        }
    }
    func disconnect(_ link: LinkID) {}
    func stop() async {}
}

/// The replayed clock: the timestamp of whatever is being delivered.
final class ReplayTime: TimeSource {
    private let now = Atomic<Int64>(0)
    func set(milliseconds: Int64) { now.store(milliseconds, ordering: .releasing) }
    func nowMilliseconds() -> Int64 { now.load(ordering: .acquiring) }
}
