import UCI

@testable import AndroidRangingOOB

/// One responder (`AndroidOOBResponder`, or `JetpackResponder`: they share inputs and actions)
/// driven as the node would drive it, with a clock the test moves, on the board `Octets.board`
/// (channels 5 and 9, BPRF preambles, config id 1) at address A1 B2; and the actions sorted by
/// where they go.
struct ResponderHarness<Machine: AndroidResponder> {
    var machine: Machine
    var now: Int64 = 1_000

    static var settings: AndroidOOBResponderSettings { AndroidOOBResponderSettings(board: Octets.board, shortAddress: [0xA1, 0xB2]) }

    /// The session id of `Octets.uwbConfigurationBlock` and of `JetpackOctets`' parameters.
    static var sessionID: UInt32 { 0x1234_5678 }

    mutating func receive(_ input: AndroidOOBResponderInput) -> [AndroidOOBResponderAction] {
        machine.receive(input, now: now)
    }

    mutating func phone(_ octets: [UInt8]) -> [AndroidOOBResponderAction] { receive(.phoneWrote(octets)) }

    mutating func tick(after milliseconds: Int64) -> [AndroidOOBResponderAction] {
        now += milliseconds
        return receive(.tick)
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

typealias AndroidOOBResponderHarness = ResponderHarness<AndroidOOBResponder>
typealias JetpackResponderHarness = ResponderHarness<JetpackResponder>

extension ResponderHarness where Machine == AndroidOOBResponder {
    init() { self.init(machine: AndroidOOBResponder(settings: Self.settings)) }

    /// Configuration (version 1) then the board's ACTIVE: the machine ranges.
    mutating func ranging() {
        _ = phone(Octets.configurationV1)
        _ = receive(.boardSessionActive(session: Self.sessionID))
    }
}

extension ResponderHarness where Machine == JetpackResponder {
    init() { self.init(machine: JetpackResponder(settings: Self.settings)) }

    /// The controller phone's parameters, then the board's ACTIVE: the machine ranges.
    mutating func ranging() {
        _ = phone(JetpackOctets.controllerParameters)
        _ = receive(.boardSessionActive(session: Self.sessionID))
    }
}
