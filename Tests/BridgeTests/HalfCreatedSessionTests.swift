import PeerProtocol
import Synchronization
import Testing
import UCI

@testable import Bridge

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
        // The board: the first SESSION_INIT creates handle 0x55 (its status notification says
        // so) but its response is lost; later ones are answered as a FiRa UWBS would.
        let script = Mutex<(handles: Set<UInt32>, inits: Int)>(([], 0))
        let board = await ScriptedBoard { command in
            script.withLock { s in
                switch (command.groupID, command.opcodeID) {
                case (1, 0):  // SESSION_INIT
                    s.inits += 1
                    if s.inits == 1 {
                        s.handles.insert(0x55)
                        return [UCIMessage(messageType: .notification, groupID: 1, opcodeID: 2, payload: [0x55, 0, 0, 0, 0x00, 0x00])]
                    }
                    if !s.handles.isEmpty { return [ScriptedBoard.response(to: command, [StatusCode.sessionDuplicate.rawValue])] }
                    s.handles.insert(0x56)
                    return [ScriptedBoard.response(to: command, [0x00, 0x56, 0, 0, 0])]
                case (1, 1):  // SESSION_DEINIT
                    s.handles.remove(UInt32(command.payload[0]))
                    return [ScriptedBoard.response(to: command, [0x00])]
                case (1, 3): return [ScriptedBoard.response(to: command, [0x00, 0x00])]  // SET_APP_CONFIG: all taken
                default: return [ScriptedBoard.response(to: command, [0x00])]  // SESSION_START and anything else: OK
                }
            }
        }

        board.sessions.open(peer: PeerID(7), Self.request)
        guard case .started(_, _, let token) = try await board.outcome(0) else {
            Issue.record("the session did not start: \(try await board.outcome(0))")
            return
        }
        #expect(token == 0x56)
        // INIT (answer lost), INIT again (the host's second attempt: duplicate), DEINIT 0x55,
        // INIT, SET_APP_CONFIG, START.
        #expect(board.commands == ["1:0", "1:0", "1:1", "1:0", "1:3", "2:0"], "\(board.commands)")
        #expect(board.payload(ofCommand: 2) == [0x55, 0, 0, 0])
    }
}
