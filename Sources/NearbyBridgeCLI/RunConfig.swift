import ArgumentParser
import BLE
import BLEBlueZ
import Capture
import Bridge
import Foundation
import GATTServer
import PeerProtocol
import PeerSecurity
import Logging
import MQTTOutput
import Replay
import ServiceLifecycle
import Simulation
import StreamIO
import UCIHost
import UCIUSB

/// `run --config FILE`: the settings a rig's service starts with (packaging/config.json).
struct RunConfig: Decodable {
    var uwb: String?
    var ble: String?
    /// 0-65535; read as any whole number so that one out of range gets its own message.
    var group: Int?
    var name: String?
    var profile: String?
    var ranges: Bool?
    var logLevel: String?
    /// Ranging sessions to run at once; without it, what the board reports (GET_CAPS_INFO).
    var rangingSessions: Int?
    /// Peers tracked at most (the least recently heard is evicted).
    var maxPeers: Int?
    /// Peers we control sharing one one-to-many UWB session; 1 (the default) or absent: one-to-one only.
    var controleesPerSession: Int?
    /// How the board's firmware is driven: "qorvo" (the default: Qorvo's FiRa UCI firmware, the
    /// DWM3001CDK) or "fira" (plain FiRa UCI with AOSP's defaults, e.g. Google's pica).
    var uwbDialect: UWBDialectName?
    /// The regulatory region the board must keep, two capital letters (ISO 3166-1 alpha-2), sent
    /// to the board at bring-up (Android's ANDROID_SET_COUNTRY_CODE); absent: none is sent.
    var countryCode: String?
    /// The received-level bias correction: "aps011-prf64" (the default: APS011's table, for
    /// DW1000/DW3000 boards whose firmware does not correct it) or "none".
    var rangeBias: String?
    /// Per board (`device` event's `board`), what `nearby-bridge calibrate` measured: its
    /// `offset` in metres (read too long), and when and against what.
    var calibration: [String: BoardCalibrationEntry]?

    /// What `nearby-bridge calibrate` files (`CalibrateCommand.file`): only the offset is used.
    struct BoardCalibrationEntry: Decodable {
        var offset: Double
        var date: String?
        var reference: String?
        var distances: [Double]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case offset, date, reference, distances
        }
    }

    /// The GATT services phones reach the rig on: "qorvo-ni", "nordic-uart"; absent or empty: no
    /// phone is served.
    var phoneServices: [String]?
    /// The octet order of the short addresses and vendor id in a phone's session on UCI:
    /// "as-in-blobs" (the default, AOSP's code) or "reversed" (`AccessoryOctetOrder`).
    var phoneOctetOrder: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case uwb, ble, group, name, profile, ranges, logLevel, rangingSessions, maxPeers, controleesPerSession, uwbDialect
        case countryCode, rangeBias, calibration, groupKey, mqtt, groupKeyFile, allowInsecurePeers, advertRotationSeconds
        case phoneServices, phoneOctetOrder
    }

    /// The phones' services, each named once, and their octet order into the bridge's settings.
    func phoneTransports(applyingTo config: inout BridgeConfig) throws -> [PhoneTransport] {
        switch phoneOctetOrder {
        case nil, "as-in-blobs": config.phoneOctetOrder = .asInBlobs
        case "reversed": config.phoneOctetOrder = .reversed
        case let other?: throw ValidationError("\"phoneOctetOrder\" must be \"as-in-blobs\" or \"reversed\", not \"\(other)\"")
        }
        var transports: [PhoneTransport] = []
        for name in phoneServices ?? [] {
            guard let transport = PhoneTransport(rawValue: name) else {
                let known = PhoneTransport.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                throw ValidationError("\"phoneServices\" lists \"\(name)\"; the services are \(known)")
            }
            guard !transports.contains(transport) else { throw ValidationError("\"phoneServices\" lists \"\(name)\" twice") }
            transports.append(transport)
        }
        return transports
    }

    /// The keys a settings file may have; any other is refused, with the key meant if it is close.
    static var knownKeys: KnownKeys {
        KnownKeys.object(
            CodingKeys.self,
            [
                CodingKeys.calibration.stringValue: .map(.object(BoardCalibrationEntry.CodingKeys.self)),
                CodingKeys.mqtt.stringValue: .object(MQTTSettings.CodingKeys.self),
            ])
    }

    /// The event key (docs/PROTOCOL.md, "Security"): 64 hex digits here, or a file holding them
    /// (`nearby-bridge keygen --output FILE`); one or the other.
    var groupKey: String?
    /// The MQTT output (`--mqtt` gives the URL and wins over `mqtt.url`).
    var mqtt: MQTTSettings?
    var groupKeyFile: String?
    /// With an event key: still range with v1 (unencrypted) peers it hears. Off by default.
    var allowInsecurePeers: Bool?
    /// How often the private advert changes (seconds; default 900).
    var advertRotationSeconds: Int?

    /// The event key and its options into the bridge's settings, and one line on stderr saying
    /// which security the peer channel has.
    func applySecurity(to config: inout BridgeConfig, logger: Logger) throws {
        let text: String?
        switch (groupKey, groupKeyFile) {
        case (let key?, nil): text = key
        case (nil, let path?):
            guard let data = FileManager.default.contents(atPath: path), let contents = String(data: data, encoding: .utf8) else {
                throw ValidationError("cannot read \"groupKeyFile\" \(path): \(whyUnreadable(path))")
            }
            if let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int, mode & 0o077 != 0 {
                logger.warning("the event key file can be read by other users; chmod 600 it", metadata: ["file": "\(path)"])
            }
            text = contents
        case (nil, nil): text = nil
        case (.some, .some): throw ValidationError("give \"groupKey\" or \"groupKeyFile\", not both")
        }
        if let text {
            do { config.security.groupKey = try GroupKey(text: text) } catch { throw ValidationError("\"groupKey\": \(error)") }
        }
        config.security.allowInsecurePeers = allowInsecurePeers ?? false
        if let seconds = advertRotationSeconds {
            guard seconds >= 60 else { throw ValidationError("\"advertRotationSeconds\" must be at least 60, not \(seconds)") }
            config.security.advertRotationMilliseconds = Int64(seconds) * 1000
        }
        if let key = config.security.groupKey {
            logger.notice("peer channel: encrypted with the event key", metadata: ["key": "\(key.fingerprint)", "v1 peers": "\(config.security.allowInsecurePeers ? "allowed" : "refused")"])
        } else {
            logger.warning(
                "peer channel: no event key (security: none); adverts, ranging parameters and cards travel in the clear. Make a key with `nearby-bridge keygen` and set \"groupKeyFile\"")
        }
    }

    /// The bias table and the boards' offsets into the bridge's settings.
    func applyRangeCorrection(to config: inout BridgeConfig) throws {
        switch rangeBias {
        case nil, "aps011-prf64": break
        case "none":
            config.rangeCorrection.table = nil
            config.rangeCorrection.tableName = "none"
        case let other?:
            throw ValidationError("\"rangeBias\" must be \"aps011-prf64\" or \"none\", not \"\(other)\"")
        }
        for (board, entry) in calibration ?? [:] { config.rangeCorrection.offsets[board] = entry.offset }
    }

    static func load(_ path: String) throws -> RunConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read --config \(path): \(whyUnreadable(path))")
        }
        let config: RunConfig
        do {
            config = try JSONDecoder().decode(RunConfig.self, from: data)
        } catch let error as DecodingError {
            throw ValidationError("--config \(path): \(Self.describe(error))")
        } catch {
            throw ValidationError("--config \(path) is not a valid settings file: \(error)")
        }
        // It decoded, so it is JSON: the keys nothing reads.
        if let unknown = try knownKeys.unknownKeys(in: JSONSerialization.jsonObject(with: data)).first {
            throw ValidationError("--config \(path): \(unknown)")
        }
        if let group = config.group, !(0...65535).contains(group) {
            throw ValidationError("--config \(path): \"group\" must be a whole number from 0 to 65535, not \(group)")
        }
        if let code = config.countryCode, code.utf8.count != 2 || !code.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) {
            throw ValidationError("--config \(path): \"countryCode\" must be two capital letters (ISO 3166-1 alpha-2, e.g. \"DE\"), not \"\(code)\"")
        }
        return config
    }

    /// One line naming the setting and what is wrong with it, instead of the decoder's dump.
    static func describe(_ error: DecodingError) -> String {
        func key(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "the file" : "\"" + path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") + "\""
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(key(context.codingPath)) must be \(Self.kind(of: type))"
        case .valueNotFound(let type, let context):
            return "\(key(context.codingPath)) must be \(Self.kind(of: type)), not null"
        case .keyNotFound(let missing, let context):
            return "\(key(context.codingPath + [missing])) is missing"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "not valid JSON (\((context.underlyingError as NSError?)?.localizedDescription ?? context.debugDescription))"
                : "\(key(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is UInt64.Type: "a whole number"
        case is Double.Type: "a number"
        default: "a \(type)"
        }
    }

    static func parse<T: ExpressibleByArgument>(_: T.Type, _ text: String, key: String) throws -> T {
        guard let value = T(argument: text) else {
            throw ValidationError("\"\(key)\": \"\(text)\" in the config file is not valid (\(key == "uwb" ? UWBEndpoint.defaultValueDescription : "world:HOST:PORT/NODE or hciN"))")
        }
        return value
    }
}

/// Why a file could not be read, as the system says it (no such file, permission denied).
func whyUnreadable(_ path: String) -> String {
    String(cString: strerror(access(path, R_OK) == 0 ? EIO : errno))
}
