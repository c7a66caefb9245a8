import AndroidRangingOOB
import Events
import GATTServer
import NearbyInteractionAccessory
import UCI

/// One phone's out-of-band machine, whichever protocol its app speaks: Apple's accessory
/// protocol (`AccessorySession`, issue 33), Android's ranging OOB (`AndroidOOBResponder`, issue
/// 31) or the rig's layout of Jetpack's parameters (`JetpackResponder`, which shares the OOB
/// responder's inputs and actions). All are pure state machines with the same shape — a phone's writes, the board's
/// reports, the link's end and ticks in; messages, a board session to start or stop, log lines
/// and the end out — so the node drives either through this one seam and treats their phones
/// alike from there on: found, ranged, bumped, lost.
enum PhoneSession {
    case accessory(AccessorySession)
    case android(AndroidOOBResponder)
    case jetpack(JetpackResponder)

    /// What happened to the phone, in the node's terms.
    enum Input {
        /// One write on the protocol's write characteristic.
        case phoneWrote([UInt8])
        /// The board's SESSION_STATUS_NTF for the phone's session (by its session id).
        case boardStatus(session: UInt32, state: SessionState, reason: ReasonCode)
        /// A command for the session failed (its start, or its DEINIT).
        case boardCommandFailed(session: UInt32, status: StatusCode)
        /// The machine asked to stop a session the board never got (it waited for a free one):
        /// it is gone at once.
        case neverStarted(session: UInt32)
        case linkEnded
        case tick
    }

    /// What the node does, in order.
    enum Action {
        /// Notify the phone on the characteristic it writes its answers to.
        case send([UInt8])
        /// Open a board session with these TLVs (the session manager adds the dialect's).
        case startBoardSession(sessionID: UInt32, appConfig: [AppConfigTLV])
        case stopBoardSession(sessionID: UInt32)
        case log(String)
        /// The machine is done: the phone is dropped (and reported lost if it was found).
        case ended
    }

    var phoneProtocol: PhoneTransport.PhoneProtocol {
        switch self {
        case .accessory: .appleAccessory
        case .android: .androidRangingOOB
        case .jetpack: .jetpackParameters
        }
    }

    /// The board session the machine answers for, from its request to its DEINIT.
    var boardSessionID: UInt32? {
        switch self {
        case .accessory(let session): session.boardSessionID
        case .android(let responder): responder.boardSessionID
        case .jetpack(let responder): responder.boardSessionID
        }
    }

    /// Whether the phone is a peer only while a session runs (Android's Ranging module ends a
    /// session with Stop Ranging and may keep the link for the next), or for its whole link (an
    /// iPhone's NI app holds the link for one accessory session).
    var endsWithItsSession: Bool {
        switch self {
        case .accessory: false
        case .android, .jetpack: true
        }
    }

    var platform: Event.Phone.Platform {
        switch self {
        case .accessory: .ios
        case .android, .jetpack: .android
        }
    }

    mutating func receive(_ input: Input, now: Int64) -> [Action] {
        switch self {
        case .accessory(var session):
            let actions = session.receive(Self.accessoryInput(input), now: now)
            self = .accessory(session)
            return actions.map(Self.action)
        case .android(var responder):
            let actions = Self.drive(&responder, input, now: now)
            self = .android(responder)
            return actions
        case .jetpack(var responder):
            let actions = Self.drive(&responder, input, now: now)
            self = .jetpack(responder)
            return actions
        }
    }

    private static func drive(_ responder: inout some AndroidResponder, _ input: Input, now: Int64) -> [Action] {
        guard let mapped = androidInput(input) else { return [] }
        return responder.receive(mapped, now: now).map(action)
    }

    private static func accessoryInput(_ input: Input) -> AccessorySessionInput {
        switch input {
        case .phoneWrote(let octets): .phoneWrote(octets)
        case let .boardStatus(session, state, reason): .boardSessionStatus(session: session, state: state, reason: reason)
        case let .boardCommandFailed(session, status): .boardCommandFailed(session: session, status: status)
        case .neverStarted(let session): .boardCommandFailed(session: session, status: .sessionNotExist)
        case .linkEnded: .phoneDisconnected
        case .tick: .tick
        }
    }

    /// Android's responders hear only ACTIVE and DEINIT of the board's session states.
    private static func androidInput(_ input: Input) -> AndroidOOBResponderInput? {
        switch input {
        case .phoneWrote(let octets): .phoneWrote(octets)
        case .boardStatus(let session, .active, _): .boardSessionActive(session: session)
        case .boardStatus(let session, .deinitialized, _), .neverStarted(let session): .boardSessionStopped(session: session)
        case .boardStatus: nil
        case let .boardCommandFailed(session, status): .boardSessionFailed(session: session, status: status)
        case .linkEnded: .linkEnded
        case .tick: .tick
        }
    }

    private static func action(_ action: AccessorySessionAction) -> Action {
        switch action {
        case .sendToPhone(let message): .send(message.encoded)
        case .startBoardSession(let configuration): .startBoardSession(sessionID: configuration.sessionID, appConfig: configuration.appConfig)
        case .stopBoardSession(let sessionID): .stopBoardSession(sessionID: sessionID)
        case .log(let reason): .log("\(reason)")
        case .sessionEnded: .ended
        }
    }

    private static func action(_ action: AndroidOOBResponderAction) -> Action {
        switch action {
        case .sendToPhone(let octets): .send(octets)
        case .startBoardSession(let configuration): .startBoardSession(sessionID: configuration.sessionID, appConfig: configuration.appConfig)
        case .stopBoardSession(let sessionID): .stopBoardSession(sessionID: sessionID)
        case .log(let reason): .log(reason.description)
        case .close: .ended
        }
    }
}
