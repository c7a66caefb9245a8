// Coverage-guided fuzzing of everything that parses bytes from a radio, a peer, or a file
// (libFuzzer: `scripts/fuzz`, docs/TESTING.md). One binary, one entry point; the target is
// chosen by NEARBY_FUZZ_TARGET. Each target feeds the input to the real decoder or state
// machine and requires only what every input must get: an error or a result, never a trap,
// never unbounded work.
//
// The target exists only in `scripts/fuzz`'s builds (NEARBY_BRIDGE_FUZZ=1 adds it to the
// package), compiled with `-sanitize=fuzzer,address`. It keeps its own `main` (SwiftPM renames
// an executable's entry point, which rules out libFuzzer's) and hands control to libFuzzer's
// driver, `LLVMFuzzerRunDriver`, with the same command line.

import AndroidRangingOOB
import BLE
@testable import Bridge
import BlueZMgmt
import Capture
import Dispatch
import Foundation
import GATTServer
import Logging
import NearbyInteractionAccessory
import PeerProtocol
import PeerSecurity
@testable import Replay
import Simulation
import UCI
import UCIHost

/// What `LLVMFuzzerTestOneInput` feeds, by name.
enum FuzzTarget: String, CaseIterable {
    case uciStream = "uci-stream"
    case uciHost = "uci-host"
    case peerMessage = "peer-message"
    case peerMachine = "peer-machine"
    case mgmt
    case advertisingData = "advertising-data"
    case json
    case capture
    case phoneMessage = "phone-message"
    case attServer = "att-server"
    case androidOOB = "android-oob"

    static let current: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["NEARBY_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("set NEARBY_FUZZ_TARGET to one of: \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return target
    }()

    func run(_ data: [UInt8]) {
        switch self {
        case .uciStream: fuzzUCIStream(data)
        case .uciHost: fuzzUCIHost(data)
        case .peerMessage: fuzzPeerMessage(data)
        case .peerMachine: fuzzPeerMachine(data)
        case .mgmt: fuzzMgmt(data)
        case .advertisingData: fuzzAdvertisingData(data)
        case .json: fuzzJSON(data)
        case .capture: fuzzCapture(data)
        case .phoneMessage: fuzzPhoneMessage(data)
        case .attServer: fuzzATTServer(data)
        case .androidOOB: fuzzAndroidOOB(data)
        }
    }
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// One input, as libFuzzer calls it (its driver also refers to it by this name).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.current.run(count == 0 ? [] : Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}

var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
_ = FuzzTarget.current  // an unknown target stops here, before libFuzzer starts
exit(runFuzzerDriver(&argc, &argv, fuzzOneInput))

/// Splits an input into chunks: each starts with a length byte (1-64 bytes follow).
func chunks(_ data: ArraySlice<UInt8>) -> [[UInt8]] {
    var rest = data
    var result: [[UInt8]] = []
    while let size = rest.popFirst() {
        let chunk = rest.prefix(Int(size % 64) + 1)
        result.append(Array(chunk))
        rest = rest.dropFirst(chunk.count)
    }
    return result
}

// MARK: UCI

/// The stream decoder fed in arbitrary pieces, every message it yields decoded as what its
/// type says; a bounded count of messages per input.
func fuzzUCIStream(_ data: [UInt8]) {
    var decoder = UCIStreamDecoder()
    var messages = 0
    for chunk in chunks(data[...]) {
        decoder.append(chunk)
        while true {
            do {
                guard let message = try decoder.next() else { break }
                messages += 1
                _ = try? UCIResponse(message)
                _ = try? UCINotification(message)
                _ = try? UCICommand(message)
            } catch {
                continue  // garbage skipped: the decoder resynchronises
            }
        }
        if decoder.pendingByteCount > 0, chunk.first.map({ $0 & 1 == 0 }) == true { decoder.skipStalledPacket() }
    }
    precondition(messages <= data.count / 4 + 1, "more messages than 4-byte headers")
}

/// A clock that stands still until `open`, then jumps to each sleep's deadline at once: the
/// board's bytes all arrive before any timeout, then every timeout fires (stall watches included).
final class GateClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }
    private let lock = NSLock()
    private var isOpen = false
    private var time = Instant(offset: .zero)
    private var sleepers: [(deadline: Instant, continuation: CheckedContinuation<Void, Never>)] = []

    var now: Instant {
        lock.lock()
        defer { lock.unlock() }
        return time
    }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { continuation in
            lock.lock()
            if isOpen {
                time = max(time, deadline)
                lock.unlock()
                continuation.resume()
            } else {
                sleepers.append((deadline, continuation))
                lock.unlock()
            }
        }
        try Task.checkCancellation()
    }

    func open() {
        lock.lock()
        isOpen = true
        let waiting = sleepers
        sleepers = []
        time = waiting.map(\.deadline).reduce(time, max)
        lock.unlock()
        waiting.forEach { $0.continuation.resume() }
    }
}

/// Logs nothing below critical. (A static, not a top-level `let`: those are set in file order
/// by the top-level code, which hands control to libFuzzer before reaching them.)
enum Quiet {
    static let logger: Logger = {
        var logger = Logger(label: "fuzz")
        logger.logLevel = .critical
        return logger
    }()
}

/// A UCI host with one command outstanding while the board sends the input, in pieces; then
/// every timeout fires. The command must end (answered, refused, malformed or timed out) and
/// the host must still take the next command.
func fuzzUCIHost(_ data: [UInt8]) {
    guard let selector = data.first else { return }
    let (hostEnd, deviceEnd) = MemoryTransport.pair()
    let clock = GateClock()
    let host = UCIHost(transport: hostEnd, commandTimeout: .seconds(1), commandAttempts: 2, clock: clock, logger: Quiet.logger) { _ in }
    let done = DispatchSemaphore(value: 0)
    Task {
        await host.start()
        let command = Task {
            switch selector % 6 {
            case 0: _ = try? await host.deviceInfo()
            case 1: _ = try? await host.capabilities()
            case 2: _ = try? await host.initSession(id: 0x0102_0304)
            case 3: try? await host.setAppConfig(session: 1, [.channel(9)])
            case 4: try? await host.updateMulticastList(session: 1, .add, [Controlee(shortAddress: 2, subSessionID: 0)])
            default: try? await host.reset()
            }
        }
        for chunk in chunks(data.dropFirst()) { try? await deviceEnd.write(chunk) }
        clock.open()
        await command.value
        _ = try? await host.startRanging(session: 1)  // times out at once: the host is not stuck
        await host.shutdown()
        done.signal()
    }
    done.wait()
}

// MARK: Peers

/// What hostile bytes meet on a keyed rig: a fixed event key, its private adverts, and an
/// established v2 channel. Static members, initialised on first use: a global declared in
/// main.swift is initialised only when the top-level code reaches it, which it never does here
/// (libFuzzer's driver runs above), so such a global would be read as zeroed memory (which once
/// crashed inside HMAC as if swift-crypto were at fault).
enum FuzzKeys {
    static let key = try! GroupKey(bytes: Array(0..<32))
    static let adverts = PrivateAdvert(key: key)
    static let channel: SecureChannel = {
        var initiator = NoiseHandshake(role: .initiator, psk: KeySchedule.handshakePSK(key), ephemeral: .init())
        var responder = NoiseHandshake(role: .responder, psk: KeySchedule.handshakePSK(key), ephemeral: .init())
        _ = try! responder.readInitiation(initiator.writeInitiation())
        return SecureChannel(keys: try! responder.writeResponse().keys)
    }()
}

/// A frame from a peer (v1, v2 inner, v2 outer: decoded, and a sealed one opened) and the
/// advertising data of an advert (v1, private: resolved with the key).
func fuzzPeerMessage(_ data: [UInt8]) {
    for version in [PeerMessage.Version.v1, .v2] {
        if let message = try? PeerMessage(frame: data, version: version) {
            // What decodes must encode to a frame that decodes to the same message.
            precondition(
                (try? PeerMessage(frame: message.encoded(version: version), version: version)) == message,
                "\(message) does not survive a \(version) round trip")
        }
    }
    if let frame = try? SecureFrame(frame: data) {
        precondition((try? SecureFrame(frame: frame.encoded())) == frame, "\(frame) does not survive a round trip")
        var channel = FuzzKeys.channel
        _ = try? channel.open(frame)
    }
    _ = try? Advertisement.find(in: data)
    _ = PrivateAdvert.isPresent(in: data)
    _ = FuzzKeys.adverts.open(data)
}

/// One peer's protocol state machine, either role, driven by a hostile script: adverts, links
/// opening and closing, decoded frames from the input, UWB outcomes, contacts and ticks.
func fuzzPeerMachine(_ data: [UInt8]) {
    var script = data[...]
    guard let role = script.popFirst() else { return }
    let peer = PeerID(2)
    let identity = NodeIdentity(
        peerID: PeerID(role & 1 == 0 ? 1 : 3), name: "fuzz", group: 1, card: ProfileCard(name: "Fuzz"), uwbShortAddress: 0x0101)
    var machine = PeerMachine(peer: peer, identity: identity, config: BridgeConfig(), seed: 1, granted: role & 2 == 0, now: 0)
    var now: Int64 = 0
    var session: UInt32 = 0
    let link = LinkID(7)
    while let op = script.popFirst() {
        let view = ProximityView(contactArmed: op & 0x80 != 0, filtered: Double(op & 0x7F) / 50, isNear: op & 0x40 != 0, lastMeasuredAt: now)
        let input: PeerInput
        switch op % 13 {
        case 0:
            let advert = Advertisement(group: 1, peerID: peer, uwbShortAddress: 0x0202, capabilities: [.uwb], psm: 0x85)
            input = .heard(advert, name: nil, address: BLEAddress(bytes: [1, 2, 3, 4, 5, 6]), rssi: -Int(op & 0x3F))
        case 1: input = .connectStarted(link)
        case 2: input = .outgoingLinkOpened(link, rangingSecret: nil)
        case 3: input = .incomingHello(link, .init(peerID: peer, group: 1, name: "peer"), retryAfter: 5_000, rangingSecret: nil)
        case 4, 5:
            let size = Int(script.popFirst() ?? 0)
            let frame = Array(script.prefix(size))
            script = script.dropFirst(frame.count)
            guard let message = try? PeerMessage(frame: frame) else { continue }
            input = .message(message, on: link, view)
        case 6: input = op & 0x10 == 0 ? .linkClosed(link) : .refused(link)
        case 7: input = .contact(distance: Double(op & 0x3F) / 100)
        case 8: input = .uwbStarted(sessionID: session, token: 1)
        case 9: input = .uwbFailed(sessionID: session, error: "refused")
        case 10: input = op & 0x10 == 0 ? .granted : .revoked(retryAfter: 1_000)
        case 11: input = op & 0x10 == 0 ? .uwbLost : .uwbBack
        default:
            now += Int64(op) * 20
            input = .tick(view)
        }
        let actions = machine.receive(input, now: now)
        precondition(actions.count < 64, "\(actions.count) actions for one input")
        for case .openUWB(let request) in actions { session = request.parameters.sessionID }
    }
    _ = machine.receive(.close(sayGoodbye: true), now: now)
}

// MARK: Bluetooth

/// A datagram from the kernel's management channel, as an event and as each command's return
/// parameters.
func fuzzMgmt(_ data: [UInt8]) {
    if let packet = try? MgmtPacket(datagram: data) {
        _ = try? MgmtEvent(packet)
    }
    _ = try? ControllerInfo(returnParameters: data)
    _ = try? AdvertisingFeatures(returnParameters: data)
    _ = try? controllerIndexes(returnParameters: data)
}

/// Advertising data: every structure walked, the name read, an AD type removed.
func fuzzAdvertisingData(_ data: [UInt8]) {
    let advertising = AdvertisingData(data)
    var covered = 0
    for structure in advertising {
        covered += structure.range.count
        precondition(structure.range.upperBound <= data.count)
    }
    precondition(covered <= data.count)
    _ = advertising.localName
    _ = advertising.removing(AdvertisingData.completeLocalName)
}

// MARK: Files

/// The JSON a user or a peer hands over: a profile card, a scenario.
func fuzzJSON(_ data: [UInt8]) {
    if let text = String(validating: data, as: UTF8.self) {
        _ = try? ProfileCard(json: text)
    }
    _ = try? Scenario.decode(Data(data))
    _ = try? CaptureManifest.decode(Data(data), path: "capture.json")
}

/// A capture's pcap files as `replay` reads them: after a little-endian 16-bit length, that
/// many bytes of `uci.pcap`, the rest `ble.pcap`.
func fuzzCapture(_ data: [UInt8]) {
    guard data.count >= 2 else { return }
    let cut = min(Int(data[0]) | Int(data[1]) << 8, data.count - 2) + 2
    let uci = (try? PcapReader.parse(Array(data[2..<cut]), path: "uci.pcap"))?.records ?? []
    let ble = (try? PcapReader.parse(Array(data[cut...]), path: "ble.pcap"))?.records ?? []
    _ = CapturedNode(uci: uci, ble: ble)
}

// MARK: Phones

/// A Nearby Interaction accessory message from a phone, after one octet that describes the board
/// (its SUPPORTED_CHANNELS bitmap; bit 0 also says whether it hops). The message is parsed and
/// re-encoded; a configure-and-start's blob, and the whole input as a blob, are parsed as shareable
/// configuration data against that board, and what parses is mapped in both octet orders.
func fuzzPhoneMessage(_ data: [UInt8]) {
    guard let selector = data.first else { return }
    let board = AccessoryCapabilities(
        capabilities: [CapabilityTLV(type: 0x0E, value: [selector]), CapabilityTLV(type: 0x0B, value: [selector & 1])], uciMajor: 2)
    let octets = Array(data.dropFirst())
    if let message = try? AccessoryMessage(octets) {
        precondition(message.encoded == octets, "a parsed message re-encodes to other octets")
        if case .configureAndStart(let blob) = message { mapShareable(blob, board: board) }
    }
    mapShareable(octets, board: board)
}

/// Parses `blob`; a configuration that passes must map to a session the board can run.
func mapShareable(_ blob: [UInt8], board: AccessoryCapabilities) {
    guard let configuration = try? ShareableConfiguration(parsing: blob, board: board) else { return }
    precondition(board.channels.contains(configuration.channel), "a channel the board lacks passed")
    precondition(board.preambleCodes.contains(configuration.preambleCode), "a preamble code the board lacks passed")
    precondition(configuration.slotDurationRSTU >= 2400 && configuration.slotDurationRSTU % 1200 == 0, "a bad slot duration passed")
    for order in AccessoryOctetOrder.allCases {
        let session = AccessorySessionConfiguration(configuration, deviceAddress: 0xA1B2, order: order)
        precondition(session.sessionID != 0 && session.appConfig.allSatisfy { $0.value.count <= 8 }, "an unsendable session")
    }
}

/// An Android ranging OOB message from a phone, after one octet that describes the board (its
/// channels bitmap over channels 5, 6, 8, 9 in bits 0-3; bit 4 adds config id 3 with 16-octet
/// keys, a board with provisioned STS; bits 5-7 the minimum interval in steps of 40 ms). What
/// parses must re-encode to the same octets, a configuration that passes the board check must be
/// inside the board's offer, with its id's key length, and must map to a sendable session. The same octets go to the Jetpack layout too
/// (`fuzzJetpack`).
func fuzzAndroidOOB(_ data: [UInt8]) {
    guard let selector = data.first else { return }
    let board = AndroidBoardCapabilities(
        channels: [5, 6, 8, 9].enumerated().filter { selector >> $0.offset & 1 == 1 }.map(\.element),
        configIDs: selector & 0x10 != 0 ? [1, 3] : [1], minimumIntervalMilliseconds: UInt16(selector >> 5) * 40,
        minimumSlotDurationMilliseconds: 1, sessionKeyLengths: selector & 0x10 != 0 ? [8, 16] : [8])
    let octets = Array(data.dropFirst())
    fuzzJetpack(octets, board: board)
    guard let message = try? OOBMessage(octets) else { return }
    precondition(message.encoded == octets, "a parsed OOB message re-encodes to other octets")
    guard case .configuration(let configuration) = message.payload, let uwb = try? board.validate(configuration) else { return }
    precondition(board.channels.contains(uwb.channel), "a channel the board lacks passed")
    precondition(board.configIDs.contains(uwb.configID), "a config id the board lacks passed")
    precondition(board.preambleIndexes.contains(uwb.preambleIndex), "a preamble index the board lacks passed")
    precondition(uwb.intervalMilliseconds >= board.minimumIntervalMilliseconds, "an interval below the minimum passed")
    precondition(uwb.sessionKey.count == (uwb.configID == 3 ? 16 : 8) && uwb.sessionID != 0, "a key length or session id the board cannot use passed")
    guard let session = try? AndroidSessionConfiguration(uwb, deviceAddress: [0xA1, 0xB2]) else {
        preconditionFailure("a checked configuration did not map")
    }
    precondition(
        session.sessionID == uwb.sessionID && session.appConfig.allSatisfy { $0.value.count <= ($0.id == .sessionKey ? 32 : 8) },
        "an unsendable session")
}

/// The rig's Jetpack layout (`JetpackRequest`, `JetpackAnswer`; a Jetpack message starts with
/// 0x4A where an OOB message has its version, 1-3), on the board `fuzzAndroidOOB` describes. What
/// parses must re-encode to itself; a write gets exactly one answer; parameters the
/// `JetpackResponder` accepts must be answered "accepted" with the rig's complementary role and a
/// complex channel the board has, and start one sendable session that a stop then stops.
func fuzzJetpack(_ octets: [UInt8], board: AndroidBoardCapabilities) {
    if let answer = try? JetpackAnswer(octets) { precondition(answer.encoded == octets, "a parsed Jetpack answer re-encodes to other octets") }
    let request = try? JetpackRequest(octets)
    if let request { precondition(request.encoded == octets, "a parsed Jetpack request re-encodes to other octets") }
    var responder = JetpackResponder(settings: AndroidOOBResponderSettings(board: board, shortAddress: [0xA1, 0xB2]))
    let actions = responder.receive(.phoneWrote(octets), now: 0)
    let answers = actions.compactMap { if case .sendToPhone(let answer) = $0 { answer } else { nil } }
    precondition(answers.count == 1 && answers[0].count <= 20, "a Jetpack write not answered by one notification at the default MTU")
    guard case .parameters(let parameters)? = request,
        case let .accepted(address, role, channel, preambleIndex)? = try? JetpackAnswer(answers[0])
    else {
        precondition(responder.state == .idle && !actions.contains { if case .startBoardSession = $0 { true } else { false } }, "a refusal started")
        return
    }
    guard actions.count == 2, case .startBoardSession(let session) = actions[1] else { preconditionFailure("accepted without a session") }
    precondition(address == [0xA1, 0xB2] && role == parameters.role.peer, "a wrong address or role accepted")
    precondition(board.channels.contains(channel) && board.preambleIndexes.contains(preambleIndex), "a complex channel the board lacks accepted")
    precondition(
        parameters.configType == 1 && parameters.subSessionID == 0 && parameters.sessionID != 0 && parameters.sessionKey.count == 8,
        "parameters the rig cannot run accepted")
    precondition(session.sessionID == parameters.sessionID && session.appConfig.allSatisfy { $0.value.count <= 8 }, "an unsendable session")
    precondition(responder.receive(.phoneWrote(JetpackRequest.stop.encoded), now: 1) == [.stopBoardSession(sessionID: session.sessionID)])
}

/// A client's PDUs to the ATT server (issue 33's GATT core): the first byte picks the services
/// offered, the Server Rx MTU and whether the link is encrypted; then PDUs, each a length byte
/// (0-255) and its octets, with a notification and an indication attempted on every
/// characteristic after each. Every request gets exactly one PDU back, no command does, and
/// nothing the server sends exceeds ATT_MTU.
func fuzzATTServer(_ data: [UInt8]) {
    guard let selector = data.first else { return }
    let offered: [AccessoryGATTService] = [.genericAccess(deviceName: "rig"), .qorvoNearbyInteraction, .nordicUART, .attendeeToken]
    var server = ATTServer(
        database: AccessoryGATTService.database(offering: offered.enumerated().filter { selector >> $0.offset & 1 == 1 }.map(\.element)),
        serverMTU: 23 + Int(selector >> 4) * 33)
    server.linkEncrypted = selector & 0x80 != 0
    var rest = data.dropFirst()
    while let length = rest.first {
        let pdu = Array(rest.dropFirst().prefix(Int(length)))
        rest = rest.dropFirst(1 + pdu.count)
        let mtuBefore = server.mtu
        let actions = server.handle(pdu)
        let sent = actions.compactMap { if case .send(let octets) = $0 { octets } else { nil } }
        precondition(sent.allSatisfy { $0.count <= max(mtuBefore, server.mtu) }, "a PDU longer than ATT_MTU")
        precondition(sent.count <= 1, "more than one answer to one PDU")
        precondition(server.mtu >= 23 && server.mtu <= 517, "ATT_MTU out of range")
        if let opcode = pdu.first {
            let isRequest = opcode & 0x40 == 0 && !ATTOpcode.isServerToClient(opcode) && opcode != 0x1E
            precondition(sent.count == (isRequest ? 1 : 0), "a request unanswered or a command answered")
        }
        for characteristic in server.database.characteristics {
            if let notification = try? server.notification(characteristic.uuid, value: pdu) {
                precondition(notification.count <= server.mtu && notification.first == 0x1B, "a bad notification")
            }
            if let indication = try? server.indication(characteristic.uuid, value: pdu) {
                precondition(indication.count <= server.mtu && indication.first == 0x1D, "a bad indication")
            }
        }
    }
}
