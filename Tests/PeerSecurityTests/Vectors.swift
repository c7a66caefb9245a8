import Crypto
import Foundation
import PeerProtocol
import Testing
@testable import PeerSecurity

/// The bytes of `Vectors/v2.json` come from `make-vectors.py`: the handshake from `noiseprotocol`
/// (an independent Noise implementation), everything else from Python's `cryptography` and the
/// layouts in docs/PROTOCOL.md. scripts/test regenerates the file and compares, so these tests
/// check our code against those implementations, not against itself.
struct Vectors {
    let json: [String: Any]

    init() throws {
        let url = try #require(Bundle.module.url(forResource: "v2", withExtension: "json", subdirectory: "Vectors"))
        json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    func section(_ name: String) -> [String: Any] { json[name] as? [String: Any] ?? [:] }
    func bytes(_ section: String, _ key: String) -> [UInt8] { hex(self.section(section)[key] as? String ?? "") }
    var groupKey: GroupKey { try! GroupKey(text: json["group_key"] as? String ?? "") }
}
