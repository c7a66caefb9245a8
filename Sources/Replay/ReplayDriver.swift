import BLE
import Bridge
import Capture
import Events
import GATTServer
import Logging
import PeerProtocol
import Proximity
import StreamIO

/// `nearby-bridge replay DIR`: rebuilds every captured node with its recorded identity, seed and
/// security (a keyed node's key and key seed from `secrets.json`) and feeds its recorded radio traffic back through the same code (UCI codec and host, peer
/// protocol, proximity, events), in recorded order, with ticks on the recorded step. The event
/// stream comes out as it was written, timestamps included: they are the recorded ones.
package final class ReplayDriver: Sendable {
    private struct Replayed {
        var name: String
        var keyed: Bool
        var node: BridgeNode
        var transport: ReplayTransport
        var adapter: ReplayAdapter
        var gatt: ReplayGATTBackend?
        var tracker: WorkTracker
        var captured: CapturedNode
    }

    private let directory: String
    private let manifest: CaptureManifest
    private let replayed: [Replayed]
    private let time = ReplayTime()
    /// When the recorded nodes started; nil when nothing was recorded.
    private let start: Int64?
    /// Ticks for a rig's capture, which ticked on the wall clock every 200 ms.
    static let rigTickMilliseconds: Int64 = 200

    package init(directory: String, events: EventStream, logger: Logger) throws {
        manifest = try CaptureManifest.read(from: directory)
        let secrets = try CaptureSecrets.read(from: directory)
        let recordings = try manifest.nodes.map { spec in
            let database = try spec.gatt.map { try Self.database($0, path: "\(directory)/capture.json") }
            let captured = try CapturedNode(
                uciPcap: "\(directory)/\(spec.name)/uci.pcap", blePcap: "\(directory)/\(spec.name)/ble.pcap", gatt: database)
            return (spec: spec, database: database, captured: captured)
        }
        // The nodes are made at the recorded start (the bring-up's first command): what they count
        // from then (stats) must fall on the recorded steps.
        start = recordings.compactMap(\.captured.firstMicroseconds).min().map { $0 / 1000 }
        time.set(milliseconds: start ?? 0)
        var replayed: [Replayed] = []
        for (spec, database, captured) in recordings {
            let gatt = database.map { _ in ReplayGATTBackend() }
            let tracker = WorkTracker()
            let transport = ReplayTransport(responses: captured.responses, tracker: tracker, description: spec.uwbBackend)
            let adapter = ReplayAdapter(localLinks: captured.localLinks, firstSent: captured.firstSent, backendName: spec.bleBackend)
            guard let id = UInt64(spec.peerID, radix: 16) else { throw CaptureError.malformed(path: "\(directory)/capture.json", reason: "peer id \(spec.peerID) is not hexadecimal") }
            let identity = NodeIdentity(
                peerID: PeerID(id), name: spec.name, group: spec.group, card: try ProfileCard(json: spec.card),
                uwbShortAddress: spec.uwbShortAddress)
            var config = BridgeConfig()
            config.proximity = ProximityConfig(
                nearMetres: manifest.proximity.nearMetres, farMetres: manifest.proximity.farMetres,
                bumpMetres: manifest.proximity.bumpMetres)
            config.security = try PeerSecuritySettings(recorded: spec.security, secrets: secrets, node: spec.name, directory: directory)
            let node = BridgeNode(
                identity: identity, config: config, uwbTransport: transport, ble: adapter, events: events,
                time: time, logger: logger, seed: spec.seed, tracker: tracker, gatt: gatt)
            replayed.append(
                Replayed(
                    name: spec.name, keyed: config.security.groupKey != nil, node: node, transport: transport, adapter: adapter,
                    gatt: gatt, tracker: tracker, captured: captured))
        }
        self.directory = directory
        self.replayed = replayed
    }

    package func run() async throws {
        let all = replayed.flatMap { $0.captured.timeline.map(\.microseconds) }
        guard let start, let last = all.max() else { return }
        for entry in replayed { try await entry.node.start() }
        let loops = replayed.map { entry in Task { await entry.node.run() } }
        for entry in replayed { await entry.tracker.waitUntilIdle() }

        let step = manifest.stepMilliseconds ?? Self.rigTickMilliseconds
        var cursors = [Int](repeating: 0, count: replayed.count)
        let end = manifest.durationMilliseconds.map { start + $0 } ?? (last / 1000 + step)
        var t = start
        while t < end {
            t += step
            time.set(milliseconds: t)
            for (index, entry) in replayed.enumerated() {
                var due: [CapturedNode.Input] = []
                while cursors[index] < entry.captured.timeline.count,
                    entry.captured.timeline[cursors[index]].microseconds / 1000 <= t
                {
                    due.append(entry.captured.timeline[cursors[index]].input)
                    cursors[index] += 1
                }
                if manifest.stepMilliseconds != nil {
                    await deliverAsSimulated(due, to: entry)
                } else {
                    // A rig's inputs came one by one on the wall clock: keep their exact order.
                    for input in due { await deliver([input], to: entry) }
                }
                entry.node.tick()
                await entry.tracker.waitUntilIdle()
            }
        }
        for entry in replayed { await entry.node.stop() }
        for loop in loops { await loop.value }
        // A keyed node's first frame on a link is its handshake message, made from the key seed:
        // if the replay did not send it again byte for byte, the seed is not the recorded one and
        // every decrypted frame after it told another story.
        if let entry = replayed.first(where: { $0.keyed && $0.adapter.divergedLink != nil }), let link = entry.adapter.divergedLink {
            throw CaptureError.malformed(
                path: "\(directory)/\(CaptureSecrets.fileName)",
                reason: "node \(entry.name)'s key seed does not reproduce its recorded handshake (its first frame on link \(link) differs): "
                    + "the events above are not what it saw; use the secrets.json --capture wrote")
        }
    }

    /// The database a node served phones, as `capture.json` names it.
    private static func database(_ gatt: CaptureManifest.GATT, path: String) throws -> GATTDatabase {
        let services = try gatt.phoneServices.map { name in
            guard let service = PhoneTransport(rawValue: name) else { throw CaptureError.malformed(path: path, reason: "unknown phone service \(name)") }
            return service
        }
        return PhoneTransport.database(offering: services, deviceName: gatt.deviceName)
    }

    /// A simulation step delivered a node's UWB bytes, then its BLE events, then its phones'
    /// GATT events, each phase to idle.
    private func deliverAsSimulated(_ inputs: [CapturedNode.Input], to entry: Replayed) async {
        await deliver(inputs.filter { if case .uci = $0 { true } else { false } }, to: entry)
        await deliver(inputs.filter { if case .ble = $0 { true } else { false } }, to: entry)
        await deliver(inputs.filter { if case .gatt = $0 { true } else { false } }, to: entry)
    }

    private func deliver(_ inputs: [CapturedNode.Input], to entry: Replayed) async {
        var bytes: [UInt8] = []
        for input in inputs {
            switch input {
            case .uci(let packet): bytes += packet
            case .ble(let event): entry.adapter.deliver(event)
            case .gatt(let event): entry.gatt?.deliver(event)
            }
        }
        if !bytes.isEmpty { entry.transport.deliver(bytes) }
        await entry.tracker.waitUntilIdle()
    }
}
