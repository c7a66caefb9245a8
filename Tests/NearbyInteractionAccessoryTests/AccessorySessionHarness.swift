import UCI

@testable import NearbyInteractionAccessory

/// One `AccessorySession` driven as the node would drive it, with a clock the test moves, and
/// the actions sorted by where they go.
struct AccessorySessionHarness {
    var machine: AccessorySession
    var now: Int64 = 1_000

    /// A rig at short address 0xA1B2 whose board ranges on channels 5 and 9 and hops
    /// (`Blobs.board`), answering with `version`.
    init(version: UWBConfigurationVersion = .v1_1) {
        machine = AccessorySession(
            settings: AccessorySessionSettings(capabilities: Blobs.board, shortAddress: 0xA1B2, version: version))
    }

    mutating func receive(_ input: AccessorySessionInput) -> [AccessorySessionAction] {
        machine.receive(input, now: now)
    }

    mutating func phone(_ octets: [UInt8]) -> [AccessorySessionAction] { receive(.phoneWrote(octets)) }

    mutating func board(_ session: UInt32, _ state: SessionState, _ reason: ReasonCode = .stateChangeWithSessionManagementCommands)
        -> [AccessorySessionAction]
    {
        receive(.boardSessionStatus(session: session, state: state, reason: reason))
    }

    mutating func tick(after milliseconds: Int64) -> [AccessorySessionAction] {
        now += milliseconds
        return receive(.tick)
    }

    /// The board's notifications for a start that works: SESSION_INIT, SET_APP_CONFIG, START.
    mutating func boardStarts(_ session: UInt32) -> [AccessorySessionAction] {
        board(session, .initialized) + board(session, .idle) + board(session, .active)
    }

    /// The board's notifications for STOP then DEINIT.
    mutating func boardStops(_ session: UInt32) -> [AccessorySessionAction] {
        board(session, .idle) + board(session, .deinitialized)
    }

    /// The octets each message to the phone puts on the air, in order.
    static func toPhone(_ actions: [AccessorySessionAction]) -> [[UInt8]] {
        actions.compactMap { if case .sendToPhone(let message) = $0 { message.encoded } else { nil } }
    }

    static func logs(_ actions: [AccessorySessionAction]) -> [AccessorySessionReason] {
        actions.compactMap { if case .log(let reason) = $0 { reason } else { nil } }
    }

    static func starts(_ actions: [AccessorySessionAction]) -> [AccessorySessionConfiguration] {
        actions.compactMap { if case .startBoardSession(let configuration) = $0 { configuration } else { nil } }
    }

    static func stops(_ actions: [AccessorySessionAction]) -> [UInt32] {
        actions.compactMap { if case .stopBoardSession(let session) = $0 { session } else { nil } }
    }

    /// Whether any action is a board command (start or stop).
    static func commandsBoard(_ actions: [AccessorySessionAction]) -> Bool {
        !starts(actions).isEmpty || !stops(actions).isEmpty
    }
}
