import Foundation

/// `capture.json`: what replay needs to rebuild each node exactly as it ran — its identity and
/// the seed of its choices (session ids, STS values) — and how time advanced (the simulation's
/// step, on which every node also ticked; nil for a rig, which ticks on the wall clock).
package struct CaptureManifest: Codable, Sendable, Equatable {
    package struct Node: Codable, Sendable, Equatable {
        package var name: String
        package var peerID: String
        package var group: UInt16
        package var uwbShortAddress: UInt16
        package var card: String
        package var seed: UInt64
        /// The radios' names as the node's `device` events gave them.
        package var uwbBackend: String
        package var bleBackend: String
        /// The peer channel's security; nil for a capture from before event keys (no key).
        package var security: Security?
        /// The GATT database the node served phones; nil if it served none.
        package var gatt: GATT?

        package init(
            name: String, peerID: String, group: UInt16, uwbShortAddress: UInt16, card: String, seed: UInt64,
            uwbBackend: String, bleBackend: String, security: Security? = nil
        ) {
            self.name = name
            self.peerID = peerID
            self.group = group
            self.uwbShortAddress = uwbShortAddress
            self.card = card
            self.seed = seed
            self.uwbBackend = uwbBackend
            self.bleBackend = bleBackend
            self.security = security
        }
    }

    /// What a node served phones: the services (`PhoneTransport` names) in order, after a Generic
    /// Access service naming `deviceName` where the backend served one (`PhoneTransport.database`),
    /// from which replay lays the same database out again.
    package struct GATT: Codable, Sendable, Equatable {
        package var phoneServices: [String]
        package var deviceName: String?

        package init(phoneServices: [String], deviceName: String?) {
            self.phoneServices = phoneServices
            self.deviceName = deviceName
        }
    }

    /// A node's security settings, nothing secret: the key's fingerprint says which key replay
    /// must find in `secrets.json` (`CaptureSecrets`).
    package struct Security: Codable, Sendable, Equatable {
        /// The `device` event's `security` value.
        package var mode: String
        package var keyFingerprint: String?
        package var allowInsecurePeers: Bool
        package var advertRotationMilliseconds: Int64

        package init(mode: String, keyFingerprint: String?, allowInsecurePeers: Bool, advertRotationMilliseconds: Int64) {
            self.mode = mode
            self.keyFingerprint = keyFingerprint
            self.allowInsecurePeers = allowInsecurePeers
            self.advertRotationMilliseconds = advertRotationMilliseconds
        }
    }

    /// The proximity thresholds the run used (`--near`, `--far`, `--bump`).
    package struct Thresholds: Codable, Sendable, Equatable {
        package var nearMetres: Double
        package var farMetres: Double
        package var bumpMetres: Double
        package init(nearMetres: Double, farMetres: Double, bumpMetres: Double) {
            self.nearMetres = nearMetres
            self.farMetres = farMetres
            self.bumpMetres = bumpMetres
        }
    }

    package var version = 1
    package var proximity: Thresholds
    package var stepMilliseconds: Int64?
    /// How long the run lasted after its first step (the simulation's duration).
    package var durationMilliseconds: Int64?
    package var nodes: [Node]

    package init(stepMilliseconds: Int64?, durationMilliseconds: Int64?, proximity: Thresholds, nodes: [Node]) {
        self.proximity = proximity
        self.stepMilliseconds = stepMilliseconds
        self.durationMilliseconds = durationMilliseconds
        self.nodes = nodes
    }

    package func write(to directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: directory).appendingPathComponent("capture.json"))
    }

    package static func read(from directory: String) throws -> CaptureManifest {
        let url = URL(fileURLWithPath: directory).appendingPathComponent("capture.json")
        return try decode(readFile(url.path), path: url.path)
    }

    /// A manifest from the bytes of a `capture.json` found at `path` (named in errors).
    package static func decode(_ data: Data, path: String) throws(CaptureError) -> CaptureManifest {
        do {
            return try JSONDecoder().decode(CaptureManifest.self, from: data)
        } catch {
            throw .malformed(path: path, reason: "\(error)")
        }
    }
}

/// A whole file, or why it could not be read (the errno `open` or `read` set).
func readFile(_ path: String) throws(CaptureError) -> Data {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw .cannotRead(path: path, errno: errno) }
    defer { close(fd) }
    var data = Data()
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count == 0 { return data }
        if count < 0 {
            if errno == EINTR { continue }
            throw .cannotRead(path: path, errno: errno)
        }
        data.append(contentsOf: chunk[..<count])
    }
}
