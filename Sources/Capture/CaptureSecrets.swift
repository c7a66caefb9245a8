import ByteCoding
import Foundation

/// `secrets.json`, beside `capture.json` and written mode 0600: what replay of a keyed run needs
/// and nothing else may hold — each keyed node's event key and the seed its ephemeral keys and
/// advert nonces were drawn from. With both, replay rebuilds the handshakes and reads the sealed
/// frames in `ble.pcap`; without them the pcap shows ciphertext only. Delete the file (or keep
/// it apart) to share a capture without opening it to whoever receives it.
package struct CaptureSecrets: Codable, Sendable, Equatable, CustomStringConvertible {
    package struct Node: Codable, Sendable, Equatable {
        /// The event key, 64 hex digits (the form `keygen` writes).
        package var groupKey: String
        /// The node's key seed, hex.
        package var keySeed: String

        package init(groupKey: String, keySeed: [UInt8]) {
            self.groupKey = groupKey
            self.keySeed = keySeed.hexString
        }

        /// The key seed's bytes, or nil when the file's text is not hex.
        package var keySeedBytes: [UInt8]? { [UInt8](hexString: keySeed) }
    }

    package static let fileName = "secrets.json"
    package var version = 1
    /// By node name, as in `capture.json`.
    package var nodes: [String: Node]

    package init(nodes: [String: Node]) {
        self.nodes = nodes
    }

    /// Never the secrets themselves (a stray log line or `print`).
    package var description: String { "CaptureSecrets(\(nodes.count) nodes, redacted)" }

    /// Writes DIR/secrets.json readable by the owner only, also when the file was there before
    /// with wider permissions. Nothing is written when no node is keyed.
    package func write(to directory: String) throws(CaptureError) {
        guard !nodes.isEmpty else { return }
        let path = "\(directory)/\(Self.fileName)"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(self) } catch { throw .malformed(path: path, reason: "\(error)") }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .cannotWrite(path: path, errno: errno) }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else { throw .cannotWrite(path: path, errno: errno) }
        if let code = PcapWriter.writeAll(fd, [UInt8](data)) { throw .cannotWrite(path: path, errno: code) }
    }

    /// DIR/secrets.json, or nil when the capture has none.
    package static func read(from directory: String) throws(CaptureError) -> CaptureSecrets? {
        let path = "\(directory)/\(fileName)"
        let data: Data
        do { data = try readFile(path) } catch {
            if case .cannotRead(_, let code) = error, code == ENOENT { return nil }
            throw error
        }
        do {
            return try JSONDecoder().decode(CaptureSecrets.self, from: data)
        } catch {
            throw .malformed(path: path, reason: "not the secrets file --capture writes (\(type(of: error)))")
        }
    }
}
