import Logging
import PeerProtocol
import StreamIO
import Synchronization
import Testing
import UCI

@testable import Bridge
@testable import UCIHost

/// A board that stops talking with its connection open (issue 16: 60 s of silence, no event,
/// no log, no probe).
@Suite struct SilentBoardTests {
    @Test func aProbeIsDueAfterFiveSilentSecondsAndThenEveryFive() {
        var watch = BoardWatch(now: 0)
        var due: [Bool] = []
        due.append(watch.shouldProbe(at: 4_999))
        watch.heard(at: 4_000)
        due.append(watch.shouldProbe(at: 8_999))
        due.append(watch.shouldProbe(at: 9_000))
        due.append(watch.shouldProbe(at: 9_100))  // one probe, not one per tick
        due.append(watch.shouldProbe(at: 14_000))
        watch.heard(at: 14_500)
        due.append(watch.shouldProbe(at: 15_000))
        #expect(due == [false, false, true, false, true, false])
    }

    /// With a session running, a board that answers nothing gets a CORE_GET_DEVICE_INFO and is
    /// reported silent when that goes unanswered; without sessions nothing is asked.
    @Test(.timeLimit(.minutes(1))) func anUnansweredProbeReportsTheBoardSilent() async throws {
        let (hostEnd, deviceEnd) = MemoryTransport.pair()
        let host = UCIHost(transport: hostEnd, commandTimeout: .milliseconds(200), logger: quietLogger) { _ in }
        await host.start()
        let outcomes = Mutex<[UWBSessionsEvent]>([])
        let sessions = UWBSessions(
            uwb: host, dialect: QorvoDialect(), profile: UWBProfile(), ownAddress: 0x0001, controleesPerSession: 1, logger: quietLogger,
            seed: 1, tracker: nil) { event in outcomes.withLock { $0.append(event) } }
        let worker = Task { await sessions.run() }
        defer { worker.cancel() }
        let silent = Atomic<Bool>(false)
        let commands = Mutex<[String]>([])
        let device = Task {
            var decoder = UCIStreamDecoder()
            while let chunk = try await deviceEnd.read() {
                decoder.append(chunk)
                while let message = try decoder.next() {
                    commands.withLock { $0.append("\(message.groupID):\(message.opcodeID)") }
                    guard !silent.load(ordering: .relaxed) else { continue }
                    // SESSION_INIT: a handle; SET_APP_CONFIG: no failed parameters; the rest: status only.
                    let payload: [UInt8] =
                        switch (message.groupID, message.opcodeID) {
                        case (1, 0): [0x00, 0x56, 0, 0, 0]
                        case (1, 3): [0x00, 0x00]
                        default: [0x00]
                        }
                    try await deviceEnd.write(UCIMessage(messageType: .response, groupID: message.groupID, opcodeID: message.opcodeID, payload: payload).encoded())
                }
            }
        }
        defer { device.cancel() }

        sessions.probe()
        sessions.open(peer: PeerID(7), HalfCreatedSessionTests.request)
        while outcomes.withLock({ $0.count }) < 1 { try await Task.sleep(for: .milliseconds(5)) }
        guard case .started = outcomes.withLock({ $0[0] }) else { Issue.record("\(outcomes.withLock { $0 })"); return }
        #expect(commands.withLock { $0.first } == "1:0", "no probe while no session runs")

        silent.store(true, ordering: .relaxed)
        sessions.probe()
        while outcomes.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(5)) }
        guard case .boardSilent(.timeout(let command)) = outcomes.withLock({ $0[1] }) else { Issue.record("\(outcomes.withLock { $0 })"); return }
        #expect(command == "CORE_GET_DEVICE_INFO")
    }
}
