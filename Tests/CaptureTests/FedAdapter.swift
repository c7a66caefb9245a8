import BLE
import Synchronization

/// An adapter whose links the test opens and feeds (`emit`); it sends nothing anywhere. What a
/// disconnect does is up to the test: by default nothing, as a peer that never answers.
final class FedAdapter: BLEAdapter {
    private let handler = Mutex<(@Sendable (BLEEvent) -> Void)?>(nil)
    private let onDisconnect: @Sendable (LinkID, (BLEEvent) -> Void) -> Void

    init(onDisconnect: @escaping @Sendable (LinkID, (BLEEvent) -> Void) -> Void = { _, _ in }) {
        self.onDisconnect = onDisconnect
    }

    var backendName: String { "test" }
    var boundAddresses: Bool { false }
    func start(events: @escaping @Sendable (BLEEvent) -> Void) async throws { handler.withLock { $0 = events } }
    func advertise(_ data: [UInt8], scanResponse: [UInt8]) async throws {}
    func startScanning() async throws {}
    func connect(to peer: BLEAddress) throws -> LinkID { 7 }
    func send(_ sdu: [UInt8], on link: LinkID) throws {}
    func disconnect(_ link: LinkID) { onDisconnect(link, emit) }
    func stop() async {}
    func emit(_ event: BLEEvent) { handler.withLock { $0 }?(event) }
}
