import Synchronization
import UCI

/// An emulated phone's UWB chip: a virtual UCI 1.1 UWBS in the phone's body (a 1.1 chip names a
/// session by its id, so the phone needs no handle), which the phone configures with the UCI
/// commands its OS's UWB stack would send, one session at a time. The air ranges it with a rig
/// only if the rig's board was given matching parameters.
final class EmulatedPhoneChip: Sendable {
    private let world: World
    private let body: Int
    /// The session it runs, if started.
    private let session = Mutex<UInt32?>(nil)

    init(world: World, body: Int) {
        self.world = world
        self.body = body
        world.attachDevice(body: body, uci: .v1_1) { _ in }
    }

    /// SESSION_INIT, SESSION_SET_APP_CONFIG with `config`, SESSION_START.
    func start(sessionID: UInt32, config: [(AppConfigID, [UInt8])]) {
        session.withLock { $0 = sessionID }
        let commands: [UCICommand] = [
            .sessionInit(sessionID: sessionID, type: .fiRaRanging),
            .setAppConfig(session: sessionID, config.map { AppConfigTLV(id: $0.0, value: $0.1) }),
            .sessionStart(session: sessionID),
        ]
        for command in commands { world.deviceInput(body: body, bytes: command.message.encoded()) }
    }

    /// SESSION_STOP and SESSION_DEINIT of the session it runs, if any.
    func stop() {
        guard let sessionID = session.withLock({ s -> UInt32? in
            defer { s = nil }
            return s
        }) else { return }
        for command in [UCICommand.sessionStop(session: sessionID), .sessionDeinit(session: sessionID)] {
            world.deviceInput(body: body, bytes: command.message.encoded())
        }
    }
}
