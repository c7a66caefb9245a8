import Testing
import UCI

@testable import NearbyInteractionAccessory

/// The accessory's exchange with a phone. Message ids from Apple's accessory sample app
/// ("Implementing spatial interactions with third-party accessories", `MessageId`: 0x0A
/// initialize, 0x0B configure and start, 0x0C stop from the phone; 0x01 accessory configuration
/// data, 0x02 did start, 0x03 did stop to it). The 0x01 octets are written by hand from the
/// accessory configuration data layout (Apple's Nearby Interaction Accessory Protocol
/// Specification R4, as AOSP's ranging test app IosAccessoryConfigurationData.java
/// `AccessoryConfigurationData.serialize` / `UwbConfigData.serialize` writes it). Session states
/// and their order from FiRa UCI's SESSION_STATUS_NTF (INIT after SESSION_INIT, IDLE after
/// SET_APP_CONFIG and after STOP, ACTIVE after START, DEINIT after SESSION_DEINIT; AOSP's
/// UWB service `UwbSessionManager` waits for the same).
@Suite struct AccessorySessionFlowTests {
    typealias H = AccessorySessionHarness

    /// 0x01 for the harness's rig, version 1.1: 38 octets.
    static let configuration1_1: [UInt8] = [
        0x01,  // message id: accessory configuration data
        0x01, 0x00, 0x00, 0x00,  // header version 1.0
        0x00,  // preferred update rate: automatic
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // reserved
        21,  // UWB configuration data length (1.1)
        0x01, 0x00, 0x01, 0x00,  // UWB configuration data version 1.1
        0x00, 0x00, 0x00, 0x00,  // manufacturer id
        0x00, 0x00, 0x00, 0x00,  // model id
        0x00, 0x00, 0x00, 0x00,  // middleware version
        0x00,  // device role: responder
        0xB2, 0xA1,  // the rig's short address 0xA1B2, little-endian
        20, 0x00,  // maximum clock drift, ppm
    ]

    static let sessionID: UInt32 = 0x1234_5678  // Blobs.version1_1's, offset 7

    @Test func happyFlowByTheOctets() {
        var h = H()
        // 0x0A → 0x01, no board command.
        let initialize = h.phone([0x0A])
        #expect(H.toPhone(initialize) == [Self.configuration1_1])
        #expect(initialize.count == 1)
        #expect(h.machine.state == .configurationSent)

        // 0x0B → the board session starts, with the mapping of the phone's blob; nothing to the phone yet.
        let configure = h.phone([0x0B] + Blobs.version1_1)
        let starts = H.starts(configure)
        #expect(configure.count == 1)
        #expect(starts.count == 1)
        #expect(starts.first?.sessionID == Self.sessionID)
        let tlvs = starts.first?.appConfig ?? []
        #expect(tlvs.first { $0.id == .channelNumber }?.value == [9])
        #expect(tlvs.first { $0.id == .staticSTSIV }?.value == [0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
        #expect(tlvs.first { $0.id == .dstMacAddress }?.value == [0xC4, 0xD3])
        #expect(tlvs.first { $0.id == .deviceMacAddress }?.value == [0xB2, 0xA1])

        // INIT, IDLE, ACTIVE → 0x02 on ACTIVE only.
        #expect(h.board(Self.sessionID, .initialized).isEmpty)
        #expect(h.board(Self.sessionID, .idle).isEmpty)
        let active = h.board(Self.sessionID, .active)
        #expect(active == [.sendToPhone(.uwbDidStart)])
        #expect(H.toPhone(active) == [[0x02]])
        #expect(h.machine.state == .ranging(starts[0]))

        // 0x0C → stop the board session; 0x03 only after DEINIT.
        let stop = h.phone([0x0C])
        #expect(stop == [.stopBoardSession(sessionID: Self.sessionID)])
        #expect(h.board(Self.sessionID, .idle).isEmpty)
        let deinit_ = h.board(Self.sessionID, .deinitialized)
        #expect(H.toPhone(deinit_) == [[0x03]])
        #expect(deinit_.count == 1)
        #expect(h.machine.state == .stopped)

        // The link stays; the phone may range again.
        let again = h.phone([0x0B] + Blobs.version1_1)
        #expect(H.starts(again).map(\.sessionID) == [Self.sessionID])
    }

    /// Version 2.0's 0x01 for a board that hops, and its blob's session (0xDEADBEEF, channel 5).
    @Test func version2_0Flow() {
        var h = H(version: .v2_0)
        #expect(
            H.toPhone(h.phone([0x0A])) == [
                [
                    0x01,  // message id
                    0x01, 0x00, 0x00, 0x00,  // header version 1.0
                    0x00,  // preferred update rate: automatic
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // reserved
                    32,  // UWB configuration data length (2.0)
                    0x02, 0x00, 0x00, 0x00,  // version 2.0
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // manufacturer, model, middleware
                    0x00,  // responder
                    0xB2, 0xA1,  // short address
                    20, 0x00,  // clock drift
                    0x00, 0x00, 0x00, 0x00,  // reserved
                    0x01,  // hopping: the board hops
                    6, 0x00,  // slots per round
                    0x60, 0x09,  // 2400 RSTU
                    240, 0x00,  // 240 ms
                ]
            ])
        let starts = H.starts(h.phone([0x0B] + Blobs.version2_0))
        #expect(starts.map(\.sessionID) == [0xDEAD_BEEF])
        #expect(starts.first?.appConfig.first { $0.id == .hoppingMode }?.value == [1])
        #expect(H.toPhone(h.boardStarts(0xDEAD_BEEF)) == [[0x02]])
    }

    @Test func noDidStartBeforeTheBoardIsActive() {
        var h = H()
        _ = h.phone([0x0A])
        _ = h.phone([0x0B] + Blobs.version1_1)
        var before: [AccessorySessionAction] = []
        before += h.board(Self.sessionID, .initialized)
        before += h.board(Self.sessionID, .idle)
        before += h.tick(after: 1_000)
        before += h.phone([0x0A])  // answered with 0x01, nothing else
        before += h.phone([0x0B] + Blobs.version1_1)  // the same write again
        #expect(H.toPhone(before) == [Self.configuration1_1])
        #expect(!H.commandsBoard(before))
        #expect(h.board(Self.sessionID, .active) == [.sendToPhone(.uwbDidStart)])
    }

    @Test func statusOfAnotherSessionIsIgnored() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        let other: UInt32 = 0x1234_5679
        var actions: [AccessorySessionAction] = []
        for state in [SessionState.initialized, .idle, .active, .deinitialized] { actions += h.board(other, state) }
        actions += h.board(other, .idle, .maxRangingRoundRetryCountReached)
        actions += h.receive(.boardCommandFailed(session: other, status: .failed))
        #expect(actions.isEmpty)
        guard case .starting = h.machine.state else {
            Issue.record("left starting: \(h.machine.state)")
            return
        }
        #expect(h.board(Self.sessionID, .active) == [.sendToPhone(.uwbDidStart)])
        // Ranging: another session's IDLE or DEINIT does not end this one.
        #expect(h.board(other, .idle, .maxRangingRoundRetryCountReached).isEmpty)
        #expect(h.board(other, .deinitialized).isEmpty)
        #expect(h.phone([0x0C]) == [.stopBoardSession(sessionID: Self.sessionID)])
        #expect(h.board(other, .deinitialized).isEmpty, "0x03 waits for this session's DEINIT")
        #expect(h.board(Self.sessionID, .deinitialized) == [.sendToPhone(.uwbDidStop)])
    }

    /// Lenient: a 0x0B without a 0x0A first starts the session all the same.
    @Test func configureWithoutInitializeStarts() {
        var h = H()
        #expect(H.starts(h.phone([0x0B] + Blobs.version1_1)).count == 1)
    }

    /// 0x0C with nothing running: UWB is stopped, so 0x03 at once and no board command.
    @Test func stopWithoutASessionAnswersAtOnce() {
        var h = H()
        _ = h.phone([0x0A])
        #expect(h.phone([0x0C]) == [.sendToPhone(.uwbDidStop)])
    }

    /// A 0x0C while starting: stopped, and 0x03 (not 0x02) after DEINIT.
    @Test func stopWhileStarting() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        #expect(h.phone([0x0C]) == [.stopBoardSession(sessionID: Self.sessionID)])
        #expect(h.board(Self.sessionID, .active).isEmpty, "no 0x02 for a session being stopped")
        #expect(H.toPhone(h.boardStops(Self.sessionID)) == [[0x03]])
    }

    /// The same 0x0B while ranging: 0x02 again (true), no board command.
    @Test func repeatedConfigureWhileRanging() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        _ = h.boardStarts(Self.sessionID)
        #expect(h.phone([0x0B] + Blobs.version1_1) == [.sendToPhone(.uwbDidStart)])
    }

    /// Another valid 0x0B while ranging: the old session is stopped, the new one started after
    /// its DEINIT, no 0x03 in between; 0x02 when the new one is active.
    @Test func newConfigureWhileRangingReplacesTheSession() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        _ = h.boardStarts(Self.sessionID)
        let replace = h.phone([0x0B] + Blobs.version2_0)
        #expect(H.stops(replace) == [Self.sessionID])
        #expect(H.starts(replace).isEmpty, "not before the old session is gone")
        #expect(H.logs(replace) == [.replacingSession(old: Self.sessionID, new: 0xDEAD_BEEF)])
        #expect(h.board(Self.sessionID, .idle).isEmpty)
        let gone = h.board(Self.sessionID, .deinitialized)
        #expect(H.toPhone(gone).isEmpty)
        #expect(H.starts(gone).map(\.sessionID) == [0xDEAD_BEEF])
        #expect(H.toPhone(h.boardStarts(0xDEAD_BEEF)) == [[0x02]])
    }

    /// 0x0C after a replacing 0x0B: the replacement is dropped, 0x03 after DEINIT.
    @Test func stopCancelsAReplacement() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        _ = h.boardStarts(Self.sessionID)
        _ = h.phone([0x0B] + Blobs.version2_0)
        #expect(h.phone([0x0C]).isEmpty, "the stop is already under way")
        let gone = h.boardStops(Self.sessionID)
        #expect(gone == [.sendToPhone(.uwbDidStop)])
    }

    /// 0x0A while ranging is answered and leaves the session running.
    @Test func initializeWhileRanging() {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        _ = h.boardStarts(Self.sessionID)
        let actions = h.phone([0x0A])
        #expect(H.toPhone(actions) == [Self.configuration1_1])
        #expect(actions.count == 1)
        #expect(h.machine.boardSessionID == Self.sessionID)
    }

    /// 0x01, 0x02, 0x03 are the accessory's: written by the phone, one reason each, nothing else.
    @Test(arguments: [
        ([0x01] + Self.configuration1_1.dropFirst(), AccessoryMessageID.accessoryConfigurationData),
        ([0x02], .uwbDidStart),
        ([0x03], .uwbDidStop),
    ])
    func accessoryMessagesFromThePhoneAreRefused(octets: [UInt8], id: AccessoryMessageID) {
        var h = H()
        _ = h.phone([0x0B] + Blobs.version1_1)
        _ = h.boardStarts(Self.sessionID)
        let before = h.machine.state
        #expect(h.phone(octets) == [.log(.accessoryMessageFromPhone(id))])
        #expect(h.machine.state == before)
    }

    /// The node may feed the machine every notification; only SESSION_STATUS_NTF is an input.
    @Test func inputFromNotification() {
        #expect(
            AccessorySessionInput(.sessionStatus(session: 7, state: .active, reason: .stateChangeWithSessionManagementCommands))
                == .boardSessionStatus(session: 7, state: .active, reason: .stateChangeWithSessionManagementCommands))
        #expect(AccessorySessionInput(.deviceStatus(.ready)) == nil)
    }
}
