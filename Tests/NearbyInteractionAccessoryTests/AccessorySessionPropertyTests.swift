import Bridge
import Testing
import UCI

@testable import NearbyInteractionAccessory

/// Seeded random runs of every input, checked against rules that hold whatever the order: the
/// phone hears 0x02 only for the board's ACTIVE of the session it started (or a repeat of its
/// running 0x0B), 0x03 only for a stop it asked or the board confirmed, a refused write costs
/// one reason and nothing else, the board is stopped only for a session it was asked to start,
/// and nothing follows the end.
@Suite struct AccessorySessionPropertyTests {
    typealias H = AccessorySessionHarness

    static let sessions: [UInt32] = [0x1234_5678, 0xDEAD_BEEF, 0x0000_0001]

    static func input(_ random: inout SplitMix64) -> AccessorySessionInput {
        let pick = { (bound: Int, random: inout SplitMix64) in Int(random.next() % UInt64(bound)) }
        switch pick(100, &random) {
        case 0..<12: return .phoneWrote([0x0A])
        case 12..<22: return .phoneWrote([0x0B] + Blobs.version1_1)
        case 22..<30: return .phoneWrote([0x0B] + Blobs.version2_0)
        case 30..<36: return .phoneWrote([0x0B] + Blobs.patched(Blobs.version1_1, at: 12, [7]))
        case 36..<44: return .phoneWrote([0x0C])
        case 44..<48:
            let count = pick(6, &random)
            return .phoneWrote((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        case 48..<80:
            let states: [SessionState] = [.initialized, .deinitialized, .active, .idle]
            let reasons: [ReasonCode] = [.stateChangeWithSessionManagementCommands, .maxRangingRoundRetryCountReached, .slotLengthNotSupported]
            return .boardSessionStatus(
                session: sessions[pick(3, &random)], state: states[pick(4, &random)], reason: reasons[pick(3, &random)])
        case 80..<86:
            let statuses: [StatusCode] = [.failed, .sessionNotExist, .rejected]
            return .boardCommandFailed(session: sessions[pick(3, &random)], status: statuses[pick(3, &random)])
        case 86..<87: return .phoneDisconnected
        default: return .tick
        }
    }

    @Test(arguments: 0..<40)
    func rulesHoldOnRandomRuns(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed) &+ 3300)
        var h = H()
        var ended = false
        /// The board session started and neither stopped nor deinitialised by the board since.
        var started: UInt32?
        for step in 0..<400 {
            let input = Self.input(&random)
            h.now += Int64(random.next() % 2_000)
            let actions = h.receive(input)
            let context = "seed \(seed) step \(step): \(input) → \(actions)"
            if ended {
                #expect(actions.isEmpty, "\(context)")
                continue
            }
            // A refused write: that one reason and nothing else.
            for reason in H.logs(actions) {
                switch reason {
                case .malformedMessage, .malformedConfiguration, .accessoryMessageFromPhone:
                    #expect(actions == [.log(reason)], "\(context)")
                default: break
                }
            }
            // The board ending the session itself (before the actions: a session waiting on that
            // DEINIT may start under the same id).
            let boardEnded: Bool =
                switch input {
                case .boardSessionStatus(let session, .deinitialized, _), .boardCommandFailed(let session, .sessionNotExist):
                    session == started
                default: false
                }
            if boardEnded { started = nil }
            for action in actions {
                switch action {
                case .sendToPhone(.uwbDidStart):
                    switch input {
                    case .boardSessionStatus(let session, .active, _): #expect(session == started, "\(context)")
                    case .phoneWrote(let octets): #expect(octets.first == 0x0B && started != nil, "\(context)")
                    default: Issue.record("0x02 after \(context)")
                    }
                case .sendToPhone(.uwbDidStop):
                    switch input {
                    case .boardSessionStatus(_, .deinitialized, _), .boardCommandFailed(_, .sessionNotExist): break
                    case .phoneWrote(let octets): #expect(octets == [0x0C] && started == nil, "\(context)")
                    default: Issue.record("0x03 after \(context)")
                    }
                case .sendToPhone(let message):
                    #expect(message.id == .accessoryConfigurationData && input == .phoneWrote([0x0A]), "\(context)")
                case .startBoardSession(let configuration):
                    #expect(started == nil, "\(context)")
                    started = configuration.sessionID
                case .stopBoardSession(let session):
                    #expect(session == started, "\(context)")
                    started = nil
                case .log: break
                case .sessionEnded:
                    #expect(input == .phoneDisconnected && action == actions.last, "\(context)")
                    ended = true
                }
            }
            #expect(h.machine.boardSessionID == nil || started == nil || h.machine.boardSessionID == started, "\(context)")
        }
    }
}
