import Logging
import PeerProtocol
import StreamIO
import Synchronization
import Testing
import UCI

@testable import Bridge
@testable import UCIHost

/// A SESSION_INIT whose answer never came leaves a session on the board; the next SESSION_INIT
/// for that id is answered SESSION_DUPLICATE (issue 16: five times a second for over a minute).
/// The session manager deinitialises the session the board reported that is none of its own,
/// then initialises again, and the session starts.
@Suite struct HalfCreatedSessionTests {
    static let request = UWBSessionRequest(
        parameters: PeerMessage.RangingParameters(
            sessionID: 0x0102_0304, channel: 9, preambleCodeIndex: 10, controllerAddress: 0x0001, controleeAddress: 0x0002,
            vendorID: 1, staticSTSIV: [1, 2, 3, 4, 5, 6], rangingIntervalMilliseconds: 100),
        asController: true, shared: false)

    @Test(.timeLimit(.minutes(1))) func aDuplicateSessionIsCleanedUpAndTheSessionStarts() async throws {
        let (hostEnd, deviceEnd) = MemoryTransport.pair()
        let host = UCIHost(transport: hostEnd, commandTimeout: .milliseconds(200), logger: quietLogger) { _ in }
        await host.start()
        let outcomes = Mutex<[UWBSessionsEvent]>([])
        let sessions = UWBSessions(
            uwb: host, dialect: QorvoDialect(), profile: UWBProfile(), ownAddress: 0x0001, controleesPerSession: 1, logger: quietLogger,
            seed: 1, tracker: nil) { event in outcomes.withLock { $0.append(event) } }
        let worker = Task { await sessions.run() }
        defer { worker.cancel() }

        // The board: the first SESSION_INIT creates handle 0x55 (its status notification says
        // so) but its response is lost; later ones are answered as a FiRa UWBS would.
        let commands = Mutex<[(gid: UInt8, oid: UInt8, payload: [UInt8])]>([])
        let device = Task {
            var decoder = UCIStreamDecoder()
            var handles: Set<UInt32> = []
            var inits = 0
            while let chunk = try await deviceEnd.read() {
                decoder.append(chunk)
                while let message = try decoder.next() {
                    commands.withLock { $0.append((message.groupID, message.opcodeID, message.payload)) }
                    func respond(_ payload: [UInt8]) async throws {
                        try await deviceEnd.write(UCIMessage(messageType: .response, groupID: message.groupID, opcodeID: message.opcodeID, payload: payload).encoded())
                    }
                    switch (message.groupID, message.opcodeID) {
                    case (1, 0):  // SESSION_INIT
                        inits += 1
                        if inits == 1 {
                            handles.insert(0x55)
                            try await deviceEnd.write(UCIMessage(messageType: .notification, groupID: 1, opcodeID: 2, payload: [0x55, 0, 0, 0, 0x00, 0x00]).encoded())
                        } else if !handles.isEmpty {
                            try await respond([StatusCode.sessionDuplicate.rawValue])
                        } else {
                            handles.insert(0x56)
                            try await respond([0x00, 0x56, 0, 0, 0])
                        }
                    case (1, 1):  // SESSION_DEINIT
                        handles.remove(UInt32(message.payload[0]))
                        try await respond([0x00])
                    case (1, 3): try await respond([0x00, 0x00])  // SET_APP_CONFIG: all taken
                    default: try await respond([0x00])  // SESSION_START and anything else: OK
                    }
                }
            }
        }
        defer { device.cancel() }

        let peer = PeerID(7)
        sessions.open(peer: peer, Self.request)
        while outcomes.withLock({ $0.count }) < 1 { try await Task.sleep(for: .milliseconds(5)) }
        guard case .failed = outcomes.withLock({ $0[0] }) else { Issue.record("the lost SESSION_INIT did not fail: \(outcomes.withLock { $0 })"); return }

        sessions.open(peer: peer, Self.request)
        while outcomes.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(5)) }
        guard case .started(_, _, let token) = outcomes.withLock({ $0[1] }) else {
            Issue.record("the session did not start: \(outcomes.withLock { $0 })")
            return
        }
        #expect(token == 0x56)
        let sent = commands.withLock { $0.map { "\($0.gid):\($0.oid)" } }
        // INIT (lost), INIT (duplicate), DEINIT 0x55, INIT, SET_APP_CONFIG, START.
        #expect(sent == ["1:0", "1:0", "1:1", "1:0", "1:3", "2:0"], "\(sent)")
        #expect(commands.withLock { $0[2].payload } == [0x55, 0, 0, 0])
    }
}
