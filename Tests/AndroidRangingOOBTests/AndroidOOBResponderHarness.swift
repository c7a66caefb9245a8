import UCI

@testable import AndroidRangingOOB

/// One `AndroidOOBResponder` driven as the node would drive it, with a clock the test moves,
/// and the actions sorted by where they go.
struct AndroidOOBResponderHarness {
    var machine = AndroidOOBResponder(settings: AndroidOOBResponderSettings(board: Octets.board, shortAddress: [0xA1, 0xB2]))
    var now: Int64 = 1_000

    /// The session id of `Octets.uwbConfigurationBlock`.
    static let sessionID: UInt32 = 0x1234_5678

    mutating func receive(_ input: AndroidOOBResponderInput) -> [AndroidOOBResponderAction] {
        machine.receive(input, now: now)
    }

    mutating func phone(_ octets: [UInt8]) -> [AndroidOOBResponderAction] { receive(.phoneWrote(octets)) }

    mutating func tick(after milliseconds: Int64) -> [AndroidOOBResponderAction] {
        now += milliseconds
        return receive(.tick)
    }

    /// Configuration (version 1) then the board's ACTIVE: the machine ranges.
    mutating func ranging() {
        _ = phone(Octets.configurationV1)
        _ = receive(.boardSessionActive(session: Self.sessionID))
    }

    static func toPhone(_ actions: [AndroidOOBResponderAction]) -> [[UInt8]] {
        actions.compactMap { if case .sendToPhone(let octets) = $0 { octets } else { nil } }
    }

    static func logs(_ actions: [AndroidOOBResponderAction]) -> [AndroidOOBResponderReason] {
        actions.compactMap { if case .log(let reason) = $0 { reason } else { nil } }
    }

    static func starts(_ actions: [AndroidOOBResponderAction]) -> [AndroidSessionConfiguration] {
        actions.compactMap { if case .startBoardSession(let configuration) = $0 { configuration } else { nil } }
    }

    static func stops(_ actions: [AndroidOOBResponderAction]) -> [UInt32] {
        actions.compactMap { if case .stopBoardSession(let session) = $0 { session } else { nil } }
    }
}
