import UCI

@testable import AndroidRangingOOB

/// One `JetpackResponder` driven as the node would drive it, with a clock the test moves, on the
/// board `Octets.board` (channels 5 and 9, BPRF preambles, config id 1) at address A1 B2.
struct JetpackResponderHarness {
    var machine = JetpackResponder(settings: AndroidOOBResponderSettings(board: Octets.board, shortAddress: [0xA1, 0xB2]))
    var now: Int64 = 1_000

    /// The session id of `JetpackOctets`' parameters.
    static let sessionID: UInt32 = 0x1234_5678

    mutating func receive(_ input: AndroidOOBResponderInput) -> [AndroidOOBResponderAction] {
        machine.receive(input, now: now)
    }

    mutating func phone(_ octets: [UInt8]) -> [AndroidOOBResponderAction] { receive(.phoneWrote(octets)) }

    mutating func tick(after milliseconds: Int64) -> [AndroidOOBResponderAction] {
        now += milliseconds
        return receive(.tick)
    }

    /// The controller phone's parameters, then the board's ACTIVE: the machine ranges.
    mutating func ranging() {
        _ = phone(JetpackOctets.controllerParameters)
        _ = receive(.boardSessionActive(session: Self.sessionID))
    }
}
