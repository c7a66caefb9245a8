import Bridge
import Foundation
import GATTServer
import PeerSecurity

/// A scripted world: who is there, where they walk, and how noisy the radios are.
///
/// JSON form (see `Scenarios/meetup.json`):
/// ```json
/// { "name": "meetup", "duration": 60, "group": 1,
///   "radio": { "sigma": 0.10 },
///   "nodes": [ { "name": "rig", "path": [[0, 0, 0]] },
///              { "name": "alice", "path": [[0, 8, 0], [12, 0.03, 0]], "card": {"name": "Alice"} },
///              { "name": "field-rig", "external": true, "path": [[0, 2, 0]] } ] }
/// ```
/// A path is a list of `[t, x, y]` waypoints (seconds, metres), linearly interpolated and held
/// after the last one, or, with `"loop": true`, walked again from the first one for as long as the
/// scenario lasts (a visitor who comes to touch the rig every few seconds, so that a rig that
/// joins a world late still sees whole gestures). `external` nodes run in another process and
/// reach the world over TCP.
/// `crowd` nodes are visitors: they hear and are heard by the other nodes (the rigs) but not by
/// each other, which keeps an event with a thousand visitors linear in size. `uwbSessions` sets how
/// many ranging sessions a node's virtual UWB board runs at once (8 unless given); `boardOffset`
/// the metres its board adds to every reading (an uncalibrated antenna delay); `uci` the FiRa UCI
/// generation its board speaks ("2.0" unless given, or "1.1": `BoardUCI`); `"rssi": false` a UCI
/// 2.0 board whose firmware ignores RSSI_REPORTING and sends the RSSI octet as 0 in every
/// measurement (a board that reports no received level, like every 1.1 board).
///
/// `attack` makes a node an attacker the world drives instead of a bridge (`Attack`, `Attacker`).
///
/// `"kind": "iphone"` makes a node an attendee's iPhone running an event's Nearby Interaction app
/// (`EmulatedIPhone`): it connects to the nearest rig in BLE range that serves phones, ranges with
/// it, and at `stopAt` (seconds; never if unset) stops its session. A rig serves phones when its
/// `phoneServices` lists the GATT services it offers them (`"qorvo-ni"`, `"nordic-uart"`,
/// `"android-oob"`), as in `run`'s configuration. `"kind": "android"` makes a node an attendee's
/// Android phone (`EmulatedAndroidPhone`) speaking Android's ranging OOB in the spec version its
/// `oob` names (`"v1"`, `"v2"`, `"v3"`: the default), or Jetpack's parameters (`"jetpack"`), to a
/// rig offering `"android-oob"`.
///
/// `groupKey` (64 hex digits, or `"from-seed"`: a key drawn from the world's seed, as the demo
/// does) gives every node the event key: peer protocol v2, private adverts, encrypted channel
/// (docs/PROTOCOL.md, "Security"). A node's own `groupKey` overrides it (`"none"`: a v1 node
/// without a key), and its `allowInsecurePeers` lets a keyed node range with v1 nodes.
///
/// `rpaTimeout` (seconds, default 900: Linux's `HCI_DEFAULT_RPA_TIMEOUT`) is how often a keyed
/// node's resolvable private address changes, as a kernel with LE privacy rotates it (`World`).
///
/// `radio` overrides any field of `RadioModel` (missing ones keep the realistic defaults):
/// received-level bias (`levelBias`: "aps011" or "none"), RSSI (`levelAtOneMetre`, `rssiSigma`,
/// `rssiCeiling`, `fadingSigma`), multipath (`multipathSigma`, `multipathNearFactor`,
/// `multipathDecorrelationMetres`, `multipathCorrelationSeconds`), body shadowing
/// (`shadowingPerMinute`, `shadowingSeconds`, `shadowingExtra`, `shadowingLoss`,
/// `shadowingFlagged`, `shadowingAttenuation`, `shadowingMinimumDistance`), the two sides
/// (`sideSigma`), jitter and faults (`sigma`, `nlosProbability`, `nlosBias`, `outlierProbability`,
/// `dropoutProbability`, `contactBias`), boards (`boardOffsetSpread`), ranges and loss (`uwbRange`,
/// `bleRange`, `advertLossProbability`, `linkLossProbability`, `resultLossProbability`,
/// `rssiAtOneMetre`, `pathLossExponent`). docs/PROXIMITY.md, "Radio model", gives the defaults
/// and their sources.
package struct Scenario: Codable, Sendable, Equatable {
    package var name: String
    package var duration: Double
    package var group: UInt16?
    package var groupKey: String?
    package var rpaTimeout: Double?
    package var radio: RadioModel?
    package var nodes: [Node]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, duration, group, groupKey, rpaTimeout, radio, nodes
    }

    /// The keys a scenario file may have (a node's `card` is the node's own).
    static var knownKeys: KnownKeys {
        KnownKeys.object(
            CodingKeys.self,
            [
                CodingKeys.radio.stringValue: .object(RadioModel.CodingKeys.self),
                CodingKeys.nodes.stringValue: .array(
                    .object(Node.CodingKeys.self, [Node.CodingKeys.attack.stringValue: .object(Attack.CodingKeys.self)])),
            ])
    }

    package init(name: String, duration: Double, group: UInt16? = nil, radio: RadioModel? = nil, nodes: [Node]) {
        self.name = name
        self.duration = duration
        self.group = group
        self.radio = radio
        self.nodes = nodes
    }

    package struct Node: Codable, Sendable, Equatable {
        package var name: String
        package var path: [Waypoint]
        package var card: JSONObjectText?
        package var external: Bool?
        package var crowd: Bool?
        package var uwbSessions: Int?
        /// The FiRa UCI generation its virtual board speaks: "2.0" (default) or "1.1".
        package var uci: BoardUCI?
        /// false: its virtual board's firmware ignores RSSI_REPORTING and sends the RSSI octet as 0
        /// in every measurement, so the host gets no received level even from a UCI 2.0 board that
        /// claims RSSI (issue 29: such boards must still bump). Unset or true: the board reports
        /// RSSI whenever its UCI generation can and the host asked.
        package var rssi: Bool?
        /// Whether the path starts over once its last waypoint is reached.
        package var loop: Bool?
        /// Metres this node's UWB board adds to every reading it takes part in (its antenna-delay
        /// error; a pair reads the sum of both boards'). Unset: drawn within the radio's
        /// `boardOffsetSpread` (0 by default: a calibrated board).
        package var boardOffset: Double?
        /// This node's event key instead of the scenario's; "none" for a node without one.
        package var groupKey: String?
        package var allowInsecurePeers: Bool?
        /// An attacker instead of a bridge (`Attack`): the world drives it, it has no key.
        package var attack: Attack?
        /// A rig (unset) or an emulated phone.
        package var kind: Kind?
        /// The GATT services a rig offers phones; unset or empty: it serves none.
        package var phoneServices: [PhoneTransport]?
        /// When a phone's app stops its session for good, in seconds.
        package var stopAt: Double?
        /// What an Android phone's app speaks to the rig.
        package var oob: AndroidOOB?
        /// LE connections its controller holds at once on the shared air; unset: a Raspberry
        /// Pi's built-in controller's (`SharedBLEAir.connectionLimit`, 8).
        package var bleConnections: Int?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, path, card, external, crowd, uwbSessions, uci, rssi, loop, boardOffset, groupKey, allowInsecurePeers, attack, kind,
                phoneServices, stopAt, oob, bleConnections
        }

        package enum Kind: String, Codable, Sendable {
            case rig
            case iphone
            case android
        }

        /// What an emulated Android phone's app speaks: the ranging OOB spec in one of its
        /// versions, or Jetpack's parameters in the rig's layout.
        package enum AndroidOOB: String, Codable, Sendable {
            case v1, v2, v3, jetpack

            /// The version octet of its OOB messages; nil for Jetpack.
            package var specVersion: UInt8? {
                switch self {
                case .v1: 1
                case .v2: 2
                case .v3: 3
                case .jetpack: nil
                }
            }
        }

        /// Whether the world drives this node as a phone instead of running a bridge for it.
        package var isPhone: Bool { kind == .iphone || kind == .android }

        package init(
            name: String, path: [Waypoint], card: JSONObjectText? = nil, external: Bool? = nil, crowd: Bool? = nil,
            uwbSessions: Int? = nil, loop: Bool? = nil, boardOffset: Double? = nil
        ) {
            self.name = name
            self.boardOffset = boardOffset
            self.path = path
            self.loop = loop
            self.card = card
            self.external = external
            self.crowd = crowd
            self.uwbSessions = uwbSessions
        }
    }

    package struct Waypoint: Codable, Sendable, Equatable {
        package var t: Double
        package var x: Double
        package var y: Double

        package init(t: Double, x: Double, y: Double) {
            self.t = t
            self.x = x
            self.y = y
        }

        package init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            t = try container.decode(Double.self)
            x = try container.decode(Double.self)
            y = try container.decode(Double.self)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(t)
            try container.encode(x)
            try container.encode(y)
        }
    }

    package enum Invalid: Error, CustomStringConvertible {
        /// The file could not be read; the error says why.
        case unreadableFile(path: String, any Error)
        case unreadable(String)
        case rule(String)

        package var description: String {
            switch self {
            case .unreadableFile(let path, let error): "cannot read the scenario: \(path): \(error.localizedDescription)"
            case .unreadable(let why): "cannot read the scenario: \(why)"
            case .rule(let why): "invalid scenario: \(why)"
            }
        }
    }

    package static func load(contentsOf url: URL) throws -> Scenario {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw Invalid.unreadableFile(path: url.path, error)
        }
        return try decode(data)
    }

    package static func decode(_ data: Data) throws -> Scenario {
        let scenario: Scenario
        do {
            scenario = try JSONDecoder().decode(Scenario.self, from: data)
        } catch let error as DecodingError {
            throw Invalid.unreadable(Self.explain(error))
        }
        // It decoded, so it is JSON: the keys nothing reads.
        if let unknown = try knownKeys.unknownKeys(in: JSONSerialization.jsonObject(with: data)).first {
            throw Invalid.unreadable("\(unknown)")
        }
        try scenario.validate()
        return scenario
    }

    /// The built-in scenarios' names (`Scenarios/NAME.json`).
    package static let builtInNames = ["meetup", "phones", "android", "world"]

    /// The built-in scenario the demo runs when no file is given.
    package static func builtIn(_ name: String = "meetup") throws -> Scenario {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Scenarios") else {
            throw Invalid.unreadable("no built-in scenario named \(name)")
        }
        return try load(contentsOf: url)
    }

    /// `groupKey` values that are not a key: a node without one, and one drawn from the world's seed.
    static let noKey = "none"
    package static let keyFromSeed = "from-seed"

    func validate() throws {
        guard duration > 0, duration.isFinite else { throw Invalid.rule("duration must be a positive number of seconds") }
        guard !nodes.isEmpty else { throw Invalid.rule("at least one node is needed") }
        if let rpaTimeout, !(rpaTimeout > 0 && rpaTimeout.isFinite) { throw Invalid.rule("rpaTimeout must be a positive number of seconds") }
        for key in [groupKey].compactMap({ $0 }) + nodes.compactMap(\.groupKey) where key != Self.noKey && key != Self.keyFromSeed {
            do { _ = try GroupKey(text: key) } catch { throw Invalid.rule("groupKey: \(error)") }
        }
        var names = Set<String>()
        for node in nodes {
            guard names.insert(node.name).inserted else { throw Invalid.rule("node name \(node.name) is used twice") }
            guard !node.path.isEmpty else { throw Invalid.rule("node \(node.name) has an empty path") }
            if let sessions = node.uwbSessions, !(1...255).contains(sessions) {
                throw Invalid.rule("node \(node.name): uwbSessions must be 1 to 255")
            }
            for (a, b) in zip(node.path, node.path.dropFirst()) where b.t < a.t {
                throw Invalid.rule("node \(node.name): waypoint times must not decrease (\(a.t) then \(b.t))")
            }
            for point in node.path where ![point.t, point.x, point.y].allSatisfy(\.isFinite) {
                throw Invalid.rule("node \(node.name): waypoints must be finite numbers")
            }
            if let attack = node.attack {
                guard attack.rate > 0, attack.rate.isFinite else { throw Invalid.rule("node \(node.name): an attack's rate must be a positive number per second") }
                guard node.external != true else { throw Invalid.rule("node \(node.name): an attacker cannot be external") }
                if let target = attack.target, !nodes.contains(where: { $0.name == target && $0.attack == nil }) {
                    throw Invalid.rule("node \(node.name): attack target \(target) is not a node that is not an attacker")
                }
            }
            if node.isPhone {
                guard node.external != true, node.attack == nil, node.crowd != true, node.phoneServices == nil else {
                    throw Invalid.rule("node \(node.name): a phone is driven by the world: no external, attack, crowd or phoneServices")
                }
            } else if node.stopAt != nil {
                throw Invalid.rule("node \(node.name): stopAt is for a phone (\"kind\": \"iphone\" or \"android\")")
            }
            if let limit = node.bleConnections, limit < 1 {
                throw Invalid.rule("node \(node.name): bleConnections must be 1 or more (connections its controller holds)")
            }
            if node.oob != nil, node.kind != .android {
                throw Invalid.rule("node \(node.name): oob is for an Android phone (\"kind\": \"android\")")
            }
            if let stopAt = node.stopAt, !(stopAt >= 0 && stopAt.isFinite) {
                throw Invalid.rule("node \(node.name): stopAt must be a number of seconds")
            }
            if node.loop == true, node.path.count < 2 || node.path[node.path.count - 1].t <= node.path[0].t {
                throw Invalid.rule("node \(node.name): a path that loops needs waypoints spanning some time")
            }
        }
    }

    private static func explain(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\" at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(context.debugDescription) at \(path(context))"
        @unknown default: return "\(error)"
        }
    }
}

extension Scenario.Node {
    /// Position at time `t` (seconds since the scenario started).
    package func position(at t: Double) -> (x: Double, y: Double) {
        guard let first = path.first, t > first.t else { return (path[0].x, path[0].y) }
        let period = path[path.count - 1].t - first.t
        let t = loop == true && period > 0 ? first.t + (t - first.t).truncatingRemainder(dividingBy: period) : t
        for (a, b) in zip(path, path.dropFirst()) where t <= b.t {
            let span = b.t - a.t
            let f = span > 0 ? (t - a.t) / span : 1
            return (a.x + (b.x - a.x) * f, a.y + (b.y - a.y) * f)
        }
        let last = path[path.count - 1]
        return (last.x, last.y)
    }
}
