import Synchronization
import Testing
import UCI

@testable import Bridge
@testable import UCIHost

/// A `UWBSessions` on a UCI host (200 ms command timeout) whose board is a script: `answer` is
/// given each command the host sends and returns what the board sends back (nothing: silence).
final class ScriptedBoard: Sendable {
    /// What the session manager reported and the board received, in order.
    private final class Record: Sendable {
        let outcomes = Mutex<[UWBSessionsEvent]>([])
        let received = Mutex<[UCIMessage]>([])
    }

    let sessions: UWBSessions
    private let record = Record()
    private let tasks: [Task<Void, any Error>]

    init(profile: UWBProfile = UWBProfile(), answer: @escaping @Sendable (UCIMessage) -> [UCIMessage]) async {
        let (hostEnd, deviceEnd) = MemoryTransport.pair()
        let host = UCIHost(transport: hostEnd, commandTimeout: .milliseconds(200), logger: quietLogger) { _ in }
        await host.start()
        let record = self.record
        let sessions = UWBSessions(
            uwb: host, dialect: QorvoDialect(), profile: profile, ownAddress: 0x0001, controleesPerSession: 1, logger: quietLogger,
            seed: 1, tracker: nil) { event in record.outcomes.withLock { $0.append(event) } }
        self.sessions = sessions
        tasks = [
            Task { await sessions.run() },
            Task {
                var decoder = UCIStreamDecoder()
                while let chunk = try await deviceEnd.read() {
                    decoder.append(chunk)
                    while let command = try decoder.next() {
                        record.received.withLock { $0.append(command) }
                        for reply in answer(command) { try await deviceEnd.write(reply.encoded()) }
                    }
                }
            },
        ]
    }

    deinit {
        for task in tasks { task.cancel() }
    }

    /// The commands the board has received, as "GID:OID".
    var commands: [String] { record.received.withLock { $0.map { "\($0.groupID):\($0.opcodeID)" } } }
    func payload(ofCommand index: Int) -> [UInt8] { record.received.withLock { $0[index].payload } }

    /// The session manager's `index`th report, once it has come.
    func outcome(_ index: Int) async throws -> UWBSessionsEvent {
        while record.outcomes.withLock({ $0.count }) <= index { try await Task.sleep(for: .milliseconds(5)) }
        return record.outcomes.withLock { $0[index] }
    }

    /// `command`'s response with `payload`.
    static func response(to command: UCIMessage, _ payload: [UInt8]) -> UCIMessage {
        UCIMessage(messageType: .response, groupID: command.groupID, opcodeID: command.opcodeID, payload: payload)
    }
}
