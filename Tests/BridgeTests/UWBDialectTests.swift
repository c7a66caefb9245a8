import Bridge
import Events
import Foundation
import PeerProtocol
import Synchronization
import Testing
import UCI

@testable import Simulation

/// Both dialects range and bump on the virtual board; what they configure differs only where the
/// firmwares differ (angles and the result report).
@Suite(.serialized) struct UWBDialectTests {
    static let parameters = PeerMessage.RangingParameters(
        sessionID: 0x0102_0304, channel: 9, preambleCodeIndex: 10, controllerAddress: 0x0A0B, controleeAddress: 0x0C0D,
        vendorID: 0x0708, staticSTSIV: [1, 2, 3, 4, 5, 6], rangingIntervalMilliseconds: 100)

    static func board(uci major: UInt8, capabilities: [CapabilityTLV]) -> BoardDescription {
        let version = UCIVersion(major: major, minor: 1, maintenance: 0)
        return BoardDescription(
            info: DeviceInfo(uciVersion: version, macVersion: version, phyVersion: version, uciTestVersion: version, vendorData: []),
            capabilities: capabilities)
    }

    /// SUPPORTED_STS_CONFIG is capability 0x07 in UCI 2.0 (0x04 in 1.x, which has no
    /// SESSION_KEY): bit n is STS_CONFIG n, provisioned is 3 (AOSP's CapabilityParam).
    @Test func provisionedSTSFromTheBoardsCapabilities() {
        #expect(Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x07, value: [0x09])]).supportsProvisionedSTS)
        #expect(!Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x07, value: [0x01])]).supportsProvisionedSTS)
        #expect(!Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x04, value: [0x09])]).supportsProvisionedSTS)
        #expect(!Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x04, value: [0x1F])]).supportsProvisionedSTS)
        // Provisioned: STS_CONFIG 3 and SESSION_KEY in place of the static vendor id and IV.
        let key = Array(UInt8(0x10)...0x1F)
        for dialect in [UWBDialectName.qorvo, .fira].map(\.dialect) {
            let provisioned = dialect.appConfig(
                for: Self.parameters, asController: true, sts: .provisioned(sessionKey: key), hops: false, profile: UWBProfile(), board: nil)
            let fixed = dialect.appConfig(for: Self.parameters, asController: true, sts: .fromParameters, hops: false, profile: UWBProfile(), board: nil)
            #expect(provisioned.contains(AppConfigTLV(id: .stsConfig, value: [3])) && provisioned.contains(AppConfigTLV(id: .sessionKey, value: key)))
            #expect(!provisioned.contains { $0.id == .vendorID || $0.id == .staticSTSIV })
            #expect(fixed.contains(AppConfigTLV(id: .stsConfig, value: [0])) && fixed.contains(AppConfigTLV(id: .staticSTSIV, value: [1, 2, 3, 4, 5, 6])))
            #expect(!fixed.contains { $0.id == .sessionKey })
        }
    }

    /// SUPPORTED_HOPPING_MODE is capability 0x0B in UCI 2.0 and 0x08 in 1.x (AOSP's
    /// CapabilityParam), one octet, 1 when the board hops; a hopping session sends HOPPING_MODE
    /// (0x2C) 1, every other session 0: the TLV's octets as SET_APP_CONFIG carries them.
    @Test func roundHoppingFromTheBoardsCapabilities() {
        #expect(Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x0B, value: [0x01])]).supportsRoundHopping)
        #expect(Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x08, value: [0x01])]).supportsRoundHopping)
        #expect(!Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x0B, value: [0x00])]).supportsRoundHopping)
        #expect(!Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x08, value: [0x01])]).supportsRoundHopping)
        #expect(!Self.board(uci: 2, capabilities: []).supportsRoundHopping)
        for dialect in [UWBDialectName.qorvo, .fira].map(\.dialect) {
            for hops in [false, true] {
                let config = dialect.appConfig(for: Self.parameters, asController: false, sts: .fromParameters, hops: hops, profile: UWBProfile(), board: nil)
                let hopping = config.filter { $0.id.rawValue == 0x2C }
                #expect(hopping.count == 1 && hopping.first?.value == [hops ? 0x01 : 0x00])
            }
        }
    }

    /// SUPPORTED_CHANNELS: 0x0E in UCI 2.0, 0x0B in 1.x (AOSP's CapabilityParam); bit 0 is
    /// channel 5, then 6, 8, 9, 10, 12, 13, 14 (so 0x11, which the virtual board once sent, is 5
    /// and 10).
    @Test func supportedChannelsFromTheBoardsCapabilities() {
        #expect(Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x0E, value: [0x09])]).supportedChannels == [5, 9])
        #expect(Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x0E, value: [0x11])]).supportedChannels == [5, 10])
        #expect(Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x0B, value: [0xFF])]).supportedChannels == [5, 6, 8, 9, 10, 12, 13, 14])
        #expect(Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x0E, value: [0x09])]).supportedChannels == nil)
    }

    /// A board is refused, with every reason, when its capabilities lack what the peer protocol
    /// ranges with: channel 9, DS-TWR deferred, unicast, static STS, both roles. The virtual
    /// boards' full sets (both generations) lack nothing; a board that says nothing is not refused.
    @Test func aBoardIsRefusedForEachThingThePeersNeedThatItLacks() {
        #expect(Self.board(uci: 2, capabilities: BoardCapabilities.dw3000(.v2_0, maxSessions: 8)).unmetNeeds(channel: 9, preambleCodes: [9, 10, 11, 12]).isEmpty)
        #expect(Self.board(uci: 1, capabilities: BoardCapabilities.dw3000(.v1_1, maxSessions: 8)).unmetNeeds(channel: 9, preambleCodes: [9, 10, 11, 12]).isEmpty)
        #expect(Self.board(uci: 2, capabilities: []).unmetNeeds(channel: 9, preambleCodes: [9, 10, 11, 12]).isEmpty)
        // UCI 2.0: channels 0x0E, roles 0x05, ranging methods 0x06, STS 0x07, multi-node 0x08.
        let lacking = Self.board(uci: 2, capabilities: [
            CapabilityTLV(type: 0x0E, value: [0x01]), CapabilityTLV(type: 0x05, value: [0x01, 0x00]),
            CapabilityTLV(type: 0x06, value: [0x1A, 0x00]), CapabilityTLV(type: 0x07, value: [0x08]),
            CapabilityTLV(type: 0x08, value: [0x02]),
        ])
        #expect(lacking.unmetNeeds(channel: 9, preambleCodes: [9, 10, 11, 12]) == [
            "the board does not support UWB channel 9, which the peers range on (it reports channels 5)",
            "the board does not support DS-TWR with deferred reports, which the peers range with",
            "the board does not support unicast sessions, which the peers range with",
            "the board does not support static STS, which the peers range with",
            "the board does not support both the initiator and the responder role, which the peers range with",
        ])
        // A DW3000 has no HPRF: preamble codes 25-32 are out; BPRF codes 9-12 are fine.
        let dw3000 = Self.board(uci: 2, capabilities: BoardCapabilities.dw3000(.v2_0, maxSessions: 8))
        #expect(dw3000.unmetNeeds(channel: 9, preambleCodes: [12, 25, 26]) == [
            "the board does not support HPRF, which the peers' preamble codes 25, 26 need"
        ])
        #expect(dw3000.unmetNeeds(channel: 9, preambleCodes: [12]).isEmpty)
        // The same octets in UCI 1.x's numbering are other capabilities: 0x05 is multi-node there.
        let oneX = Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x05, value: [0x02])])
        #expect(oneX.unmetNeeds(channel: 9, preambleCodes: [9, 10, 11, 12]) == ["the board does not support unicast sessions, which the peers range with"])
    }

    /// A board that cannot use the channel every rig ranges on is reported as an error, saying
    /// which channels it has (the virtual board: 5 and 9), not as ready.
    @Test func aBoardWithoutThePeersChannelIsReportedAsAnError() async throws {
        var options = SimulationDriver.Options()
        options.speed = nil
        options.duration = 1
        options.epochMilliseconds = fixedEpoch
        let output = CollectedEvents()
        for channel: UInt8 in [9, 6] {
            options.bridge.uwb.channel = channel
            let driver = SimulationDriver(
                scenario: try Scenario.builtIn(), options: options, events: EventStream(output: output, includesRanges: false),
                logger: quietLogger)
            try await driver.run()
        }
        let boards = try parse(output.lines).filter { $0["type"] as? String == "device" && $0["radio"] as? String == "uwb" }
        #expect(boards.count == 10)
        for (index, board) in boards.enumerated() {
            let detail = board["detail"] as? [String: String] ?? [:]
            #expect(detail["channels"] == "5,9")
            if index < 5 {
                #expect(board["state"] as? String == "ready" && detail["error"] == nil)
            } else {
                #expect(board["state"] as? String == "error")
                #expect(detail["error"] == "the board does not support UWB channel 6, which the peers range on (it reports channels 5,9)")
            }
        }
    }

    @Test func firaAsksForAnglesOnlyOfABoardThatSaysItMeasuresThem() {
        let profile = UWBProfile()
        let withAngles = Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x10, value: [0x01])])
        let withoutAngles = Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x10, value: [0x00])])
        // UCI 2.0 numbers its capabilities differently: 0x10 there is not SUPPORTED_AOA, 0x13 is
        // (AOSP's CapabilityParam SUPPORTED_AOA_VER_2_0).
        let uci2 = Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x10, value: [0x01])])
        let uci2WithAngles = Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x13, value: [0x01])])
        let uci2WithoutAngles = Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x13, value: [0x00])])
        let fira = FiRaDialect()
        func config(_ board: BoardDescription?) -> [AppConfigTLV] {
            fira.appConfig(for: Self.parameters, asController: true, sts: .fromParameters, hops: false, profile: profile, board: board)
        }
        for board in [withAngles, uci2WithAngles] {
            #expect(config(board).contains(.aoaResultRequest(1)))
            #expect(config(board).contains(.resultReportConfig(0x0B)))
        }
        for board in [withoutAngles, uci2, uci2WithoutAngles, nil] {
            #expect(config(board).contains(.aoaResultRequest(0)))
            #expect(config(board).contains(.resultReportConfig(0x01)))
        }
        // Qorvo's firmware is asked for angles as Qorvo's own scripts do, unless it says it
        // measures none (one antenna): then time of flight only.
        func qorvo(_ board: BoardDescription?) -> [AppConfigTLV] {
            QorvoDialect().appConfig(for: Self.parameters, asController: false, sts: .fromParameters, hops: false, profile: profile, board: board)
        }
        for board in [withAngles, uci2WithAngles, uci2, nil] {
            #expect(qorvo(board).contains(.aoaResultRequest(1)) && qorvo(board).contains(.resultReportConfig(0x0B)))
        }
        for board in [withoutAngles, uci2WithoutAngles] {
            #expect(qorvo(board).contains(.aoaResultRequest(0)) && qorvo(board).contains(.resultReportConfig(0x01)))
        }
        // Both ask a UCI 2.0 board for the received level (the range-bias correction needs it),
        // and a board not yet described; not a UCI 1.1 board, whose measurements have no RSSI
        // octet and which does not know RSSI_REPORTING.
        for board in [uci2WithoutAngles, uci2WithAngles, nil] {
            #expect(config(board).contains(.rssiReporting(1)) && qorvo(board).contains(.rssiReporting(1)))
        }
        #expect(!config(withoutAngles).contains { $0.id == .rssiReporting } && !qorvo(withAngles).contains { $0.id == .rssiReporting })
        // The session itself is configured alike: same TLVs but for the last four.
        #expect(Array(config(withoutAngles).dropLast(4)) == Array(QorvoDialect().appConfig(
            for: Self.parameters, asController: true, sts: .fromParameters, hops: false, profile: profile, board: withoutAngles).dropLast(4)))
    }

    /// The meetup on the virtual board with each dialect: its SET_APP_CONFIG reaches the board as
    /// configured (the board reports no AoA, one antenna: neither dialect asks for angles), and
    /// both dialects give the same four bumps.
    @Test(arguments: UWBDialectName.allCases) func theMeetupBumpsWithEitherDialect(dialect: UWBDialectName) async throws {
        let logs = Mutex<[OneToManyTests.CommandLog]>([])
        var options = SimulationDriver.Options()
        options.speed = nil
        options.epochMilliseconds = fixedEpoch
        options.bridge.uwbDialect = dialect
        options.instrument = { _, uwb, ble, _ in
            let log = OneToManyTests.CommandLog(uwb)
            logs.withLock { $0.append(log) }
            return (log, ble)
        }
        let output = CollectedEvents()
        let driver = SimulationDriver(
            scenario: try Scenario.builtIn(), options: options, events: EventStream(output: output, includesRanges: false),
            logger: quietLogger)
        try await driver.run()

        let configs = logs.withLock { $0 }.flatMap(\.commands).compactMap { if case .setAppConfig(_, let tlvs) = $0 { tlvs } else { nil } }
        #expect(!configs.isEmpty)
        #expect(configs.allSatisfy { $0.contains(.resultReportConfig(0x01)) && $0.contains(.aoaResultRequest(0)) })
        let bumps = try parse(output.lines).filter { $0["type"] as? String == "bump" }
        #expect(bumps.count == 4)
    }
}
