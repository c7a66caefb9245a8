import BLE
import Bridge
import Synchronization
import UCI
import StreamIO
import UCIHost

/// Plays the Bluetooth adapter: recorded events are delivered by the driver; the node's own
/// connection attempts get the link ids they got when recorded; what it sends goes nowhere.
final class ReplayAdapter: BLEAdapter {
    private let handler = CallbackSlot<BLEEvent>()
    private let localLinks: Mutex<[LinkID]>
    /// The first frame the node sent on each link when recorded, until the replay sends its own;
    /// and the first link on which they differed.
    private let expectedFirst: Mutex<(frames: [LinkID: [UInt8]], differs: LinkID?)>
    let backendName: String
    /// The replayed node's advert goes nowhere.
    let boundAddresses = false

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
