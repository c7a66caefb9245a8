import PeerProtocol
import Synchronization
import Testing
import UCI
import UCIHost

@testable import Bridge

/// A command the board never answers, however often the host sends it (issue 16: a
/// SESSION_INIT never answered left that peer without ranging for as long as it stayed).
@Suite struct UnansweredCommandTests {
    /// CORE_GET_DEVICE_INFO_RSP as pica sends it (UCI 2.0, MAC/PHY 1.3).
    static let deviceInfo: [UInt8] = [0x00, 0x02, 0x00, 0x01, 0x30, 0x01, 0x30, 0x01, 0x10, 0x00]

    /// A board that answers everything the way a FiRa UWBS would, but for what `answers` refuses.
    static func board(answers: @escaping @Sendable (UCIMessage) -> Bool) async -> ScriptedBoard {
        await ScriptedBoard { command in
            guard answers(command) else { return [] }
            switch (command.groupID, command.opcodeID) {
            case (0, 2): return [ScriptedBoard.response(to: command, deviceInfo)]
            case (1, 0): return [ScriptedBoard.response(to: command, [0x00, 0x56, 0, 0, 0])]  // SESSION_INIT: a handle
            case (1, 3): return [ScriptedBoard.response(to: command, [0x00, 0x00])]  // SET_APP_CONFIG: all taken
            default: return [ScriptedBoard.response(to: command, [0x00])]
            }
        }
    }

    /// With a country code in the profile the bring-up sends ANDROID_SET_COUNTRY_CODE after the
    /// reset and says the board took it; a board without Android's vendor group (UNKNOWN_GID)
    /// still comes up, keeping its own region.
    @Test(.timeLimit(.minutes(1)), arguments: [true, false]) func theBringUpSetsTheCountryCode(boardKnowsIt: Bool) async throws {
        var profile = UWBProfile()
        profile.countryCode = "DE"
        let board = await ScriptedBoard(profile: profile) { command in
            switch (command.groupID, command.opcodeID) {
            case (0, 2): return [ScriptedBoard.response(to: command, Self.deviceInfo)]
            case (0, 3): return [ScriptedBoard.response(to: command, [0x00, 0x00])]  // no capabilities
            case (0xC, 1): return [ScriptedBoard.response(to: command, [boardKnowsIt ? 0x00 : StatusCode.unknownGID.rawValue])]
            default: return [ScriptedBoard.response(to: command, [0x00])]
            }
        }
        board.sessions.bringUp()
        guard case .boardReady(let description) = try await board.outcome(0) else { Issue.record("\(try await board.outcome(0))"); return }
        #expect(description.countryCode == (boardKnowsIt ? "DE" : nil))
        #expect(board.commands == ["0:0", "12:1", "0:2", "0:3"])
        #expect(board.payload(ofCommand: 1) == Array("DE".utf8))
    }

    /// One SESSION_INIT goes unanswered three times while the board answers everything else:
    /// that request fails (the peer retries it with back-off), the board answers the probe that
    /// follows, so it is not reset, and the next peer's session starts.
    @Test(.timeLimit(.minutes(1))) func anUnansweredSessionInitFailsOnlyItsPeer() async throws {
        let inits = Atomic<Int>(0)
        let board = await Self.board { command in
            guard (command.groupID, command.opcodeID) == (1, 0) else { return true }
            return inits.add(1, ordering: .relaxed).newValue > 3
        }

        board.sessions.open(peer: PeerID(7), HalfCreatedSessionTests.request)
        guard case .failed(_, _, .timeout("SESSION_INIT")) = try await board.outcome(0) else {
            Issue.record("\(try await board.outcome(0))")
            return
        }
        var other = HalfCreatedSessionTests.request
        other.parameters.sessionID = 0x0506_0708
        board.sessions.open(peer: PeerID(8), other)
        guard case .started(PeerID(8), _, _) = try await board.outcome(1) else { Issue.record("\(try await board.outcome(1))"); return }
        // Three SESSION_INITs, the probe (CORE_GET_DEVICE_INFO), then the other peer's session.
        #expect(board.commands == ["1:0", "1:0", "1:0", "0:2", "1:0", "1:3", "2:0"], "\(board.commands)")
    }

    /// A board that stops answering altogether while a session runs: the next request fails,
    /// the probe goes unanswered too, and the board is reported unresponsive (the node then
    /// reopens it, resets it and re-creates every session).
    @Test(.timeLimit(.minutes(1))) func aBoardThatAnswersNothingIsReportedUnresponsive() async throws {
        let silent = Atomic<Bool>(false)
        let board = await Self.board { _ in !silent.load(ordering: .relaxed) }
        board.sessions.open(peer: PeerID(7), HalfCreatedSessionTests.request)
        guard case .started = try await board.outcome(0) else { Issue.record("\(try await board.outcome(0))"); return }

        silent.store(true, ordering: .relaxed)
        board.sessions.close(peer: PeerID(7))
        guard case .boardUnresponsive(.timeout("CORE_GET_DEVICE_INFO")) = try await board.outcome(1) else {
            Issue.record("\(try await board.outcome(1))")
            return
        }
        // SESSION_DEINIT three times (the board never said the session was active, so no
        // SESSION_STOP), then the probe three times.
        #expect(board.commands.suffix(6) == ["1:1", "1:1", "1:1", "0:2", "0:2", "0:2"], "\(board.commands)")
    }
}
