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

    @Test func firaAsksForAnglesOnlyOfABoardThatSaysItMeasuresThem() {
        let profile = UWBProfile()
        let withAngles = Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x10, value: [0x01])])
        let withoutAngles = Self.board(uci: 1, capabilities: [CapabilityTLV(type: 0x10, value: [0x00])])
        // UCI 2.0 numbers its capabilities differently: 0x10 there is not SUPPORTED_AOA.
        let uci2 = Self.board(uci: 2, capabilities: [CapabilityTLV(type: 0x10, value: [0x01])])
        let fira = FiRaDialect()
        func config(_ board: BoardDescription?) -> [AppConfigTLV] {
            fira.appConfig(for: Self.parameters, asController: true, profile: profile, board: board)
        }
        #expect(config(withAngles).contains(.aoaResultRequest(1)))
        #expect(config(withAngles).contains(.resultReportConfig(0x0B)))
        for board in [withoutAngles, uci2, nil] {
            #expect(config(board).contains(.aoaResultRequest(0)))
            #expect(config(board).contains(.resultReportConfig(0x01)))
        }
        // Qorvo's firmware is asked for angles whatever it says, as Qorvo's own scripts do.
        let qorvo = QorvoDialect().appConfig(for: Self.parameters, asController: false, profile: profile, board: withoutAngles)
        #expect(qorvo.contains(.aoaResultRequest(1)) && qorvo.contains(.resultReportConfig(0x0B)))
        // Both ask for the received level (the range-bias correction needs it).
        #expect(config(withoutAngles).contains(.rssiReporting(1)) && qorvo.contains(.rssiReporting(1)))
        // The session itself is configured alike: same TLVs but for the last four.
        #expect(Array(config(withoutAngles).dropLast(4)) == Array(QorvoDialect().appConfig(
            for: Self.parameters, asController: true, profile: profile, board: withoutAngles).dropLast(4)))
    }

    /// The meetup on the virtual board with each dialect: the `fira` dialect's SET_APP_CONFIG
    /// reaches the board as configured, and both dialects give the same four bumps.
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
        let expected: AppConfigTLV = dialect == .qorvo ? .resultReportConfig(0x0B) : .resultReportConfig(0x01)
        #expect(configs.allSatisfy { $0.contains(expected) })
        let bumps = try parse(output.lines).filter { $0["type"] as? String == "bump" }
        #expect(bumps.count == 4)
    }
}
