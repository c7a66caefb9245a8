import Synchronization
import Testing
import UCI

@testable import Bridge
@testable import UCIHost

/// A `UWBSessions` on a UCI host whose board is a script: `answer` is given each command the host
/// sends and returns what the board sends back (nothing: silence).
///
/// The host's 200 ms command timeout runs on a `ManualClock` that moves only while the board is
/// silent: every command the host wrote has been read and the last one got no response. An
/// answer in flight therefore never meets a deadline, however long a loaded machine delays it
/// (on real time, a resend under load put an extra command into the sequences these tests
/// check), and a silent board still times out as soon as the test waits for an outcome.
final class ScriptedBoard: Sendable {
    /// What the session manager reported and the board received, in order.
    private final class Record: Sendable {
        let outcomes = Mutex<[UWBSessionsEvent]>([])
        let received = Mutex<(commands: [UCIMessage], lastAnswered: Bool)>(([], true))
        /// Commands the host has written, whether or not the board has read them yet.
        let written = Atomic<Int>(0)
    }

    /// The host's end of the pipe, counting the commands written into it (one per write).
    private final class CountingTransport: UCITransport {
        let inner: MemoryTransport
        let record: Record
        var description: String { inner.description }
        init(_ inner: MemoryTransport, countingInto record: Record) {
            self.inner = inner
            self.record = record
        }
        func write(_ bytes: [UInt8]) async throws {
            record.written.add(1, ordering: .sequentiallyConsistent)
            try await inner.write(bytes)
        }
        func read() async throws -> [UInt8]? { try await inner.read() }
        func close() { inner.close() }
    }

    static let commandTimeout = Duration.milliseconds(200)
    let sessions: UWBSessions
    private let clock = ManualClock()
    private let record = Record()
    private let tasks: [Task<Void, any Error>]

    init(profile: UWBProfile = UWBProfile(), answer: @escaping @Sendable (UCIMessage) -> [UCIMessage]) async {
        let (hostEnd, deviceEnd) = MemoryTransport.pair()
        let record = self.record
        let host = UCIHost(
            transport: CountingTransport(hostEnd, countingInto: record), commandTimeout: Self.commandTimeout, clock: clock,
            logger: quietLogger
        ) { _ in }
        await host.start()
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
                        let replies = answer(command)
                        let answered = replies.contains { $0.messageType == .response }
                        // Recorded before the replies go out: the host may send its next command
                        // as soon as it reads them, and that one must find this one recorded.
                        record.received.withLock {
                            $0.commands.append(command)
                            $0.lastAnswered = answered
                        }
                        for reply in replies { try await deviceEnd.write(reply.encoded()) }
                    }
                }
            },
        ]
    }

    deinit {
        for task in tasks { task.cancel() }
    }

    /// The commands the board has received, as "GID:OID".
    var commands: [String] { record.received.withLock { $0.commands.map { "\($0.groupID):\($0.opcodeID)" } } }
    func payload(ofCommand index: Int) -> [UInt8] { record.received.withLock { $0.commands[index].payload } }

    /// The session manager's `index`th report, once it has come; while the board is silent, the
    /// host's clock moves on by a command timeout at a time.
    func outcome(_ index: Int) async throws -> UWBSessionsEvent {
        while record.outcomes.withLock({ $0.count }) <= index {
            if isSilent { clock.advance(by: Self.commandTimeout) }
            try await Task.sleep(for: .milliseconds(5))
        }
        return record.outcomes.withLock { $0[index] }
    }

    /// Every command written has been read, and the last one was not answered.
    private var isSilent: Bool {
        let written = record.written.load(ordering: .sequentiallyConsistent)
        return record.received.withLock { !$0.lastAnswered && $0.commands.count == written }
    }

    /// `command`'s response with `payload`.
    static func response(to command: UCIMessage, _ payload: [UInt8]) -> UCIMessage {
        UCIMessage(messageType: .response, groupID: command.groupID, opcodeID: command.opcodeID, payload: payload)
    }
}
