import PeerProtocol
import Testing
import UCI

@testable import Bridge

/// A phone's session as the board receives it: the session manager sends the phone's app config
/// as given, with the dialect's report TLVs after it, and closes it like a rig's. Octets written
/// by hand from FiRa UCI's message layouts (SESSION_INIT: session id, session type;
/// SESSION_SET_APP_CONFIG: handle, count, then id-length-value; AOSP's `FiraParams` ids:
/// CHANNEL_NUMBER 0x04, AOA_RESULT_REQ 0x0D, RANGE_DATA_NTF_CONFIG 0x0E, RSSI_REPORTING 0x13,
/// STATIC_STS_IV 0x28, RESULT_REPORT_CONFIG 0x2E).
@Suite struct PhoneSessionOnBoardTests {
    /// A FiRa board that answers everything with OK, gives SESSION_INIT the handle 0x56 and
    /// reports the session ACTIVE after SESSION_START.
    static func board() async -> ScriptedBoard {
        await ScriptedBoard { command in
            switch (command.groupID, command.opcodeID) {
            case (1, 0): return [ScriptedBoard.response(to: command, [0x00, 0x56, 0, 0, 0])]
            case (1, 3): return [ScriptedBoard.response(to: command, [0x00, 0x00])]
            case (2, 0):
                return [
                    ScriptedBoard.response(to: command, [0x00]),
                    UCIMessage(messageType: .notification, groupID: 1, opcodeID: 2, payload: [0x56, 0, 0, 0, 0x02, 0x00]),
                ]
            default: return [ScriptedBoard.response(to: command, [0x00])]
            }
        }
    }

    @Test func theBoardGetsThePhonesAppConfigAndTheReportTLVs() async throws {
        let board = await Self.board()
        let phone = PeerID(0x7070)
        board.sessions.open(phone: phone, sessionID: 0x0BAD_CAFE, appConfig: [.channel(9), .staticSTSIV([1, 2, 3, 4, 5, 6])])
        guard case .started(phone, sessionID: 0x0BAD_CAFE, token: 0x56) = try await board.outcome(0) else {
            Issue.record("\(try await board.outcome(0))")
            return
        }
        #expect(board.commands == ["1:0", "1:3", "2:0"])
        #expect(board.payload(ofCommand: 0) == [0xFE, 0xCA, 0xAD, 0x0B, 0x00])  // session id, FiRa ranging
        #expect(
            board.payload(ofCommand: 1) == [
                0x56, 0x00, 0x00, 0x00, 6,  // handle, six parameters
                0x04, 1, 9,  // CHANNEL_NUMBER
                0x28, 6, 1, 2, 3, 4, 5, 6,  // STATIC_STS_IV
                0x0D, 1, 1,  // AOA_RESULT_REQ (Qorvo's dialect asks for angles)
                0x2E, 1, 0x0B,  // RESULT_REPORT_CONFIG: time of flight, azimuth, figures of merit
                0x13, 1, 1,  // RSSI_REPORTING
                0x0E, 1, 1,  // RANGE_DATA_NTF_CONFIG
            ])

        // Closed as a rig's: the active session is stopped, then deinitialised.
        board.sessions.close(peer: phone)
        while board.commands.count < 5 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(Array(board.commands[3...]) == ["2:1", "1:1"])
        #expect(board.payload(ofCommand: 4) == [0x56, 0x00, 0x00, 0x00])
    }
}
