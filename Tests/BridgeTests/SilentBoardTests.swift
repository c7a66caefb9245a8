import PeerProtocol
import Synchronization
import Testing
import UCI

@testable import Bridge

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
        let silent = Atomic<Bool>(false)
        let board = await ScriptedBoard { command in
            guard !silent.load(ordering: .relaxed) else { return [] }
            // SESSION_INIT: a handle; SET_APP_CONFIG: no failed parameters; the rest: status only.
            switch (command.groupID, command.opcodeID) {
            case (1, 0): return [ScriptedBoard.response(to: command, [0x00, 0x56, 0, 0, 0])]
            case (1, 3): return [ScriptedBoard.response(to: command, [0x00, 0x00])]
            default: return [ScriptedBoard.response(to: command, [0x00])]
            }
        }

        board.sessions.probe()
        board.sessions.open(peer: PeerID(7), HalfCreatedSessionTests.request)
        guard case .started = try await board.outcome(0) else { Issue.record("\(try await board.outcome(0))"); return }
        #expect(board.commands.first == "1:0", "no probe while no session runs")

        silent.store(true, ordering: .relaxed)
        board.sessions.probe()
        guard case .boardUnresponsive(.timeout(let command)) = try await board.outcome(1) else { Issue.record("\(try await board.outcome(1))"); return }
        #expect(command == "CORE_GET_DEVICE_INFO")
    }
}
