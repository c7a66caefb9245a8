import Foundation
import PeerProtocol

/// The small JSON object a rig hands to a peer after a bump (name, links, whatever the event
/// wants). Stored in canonical form (sorted keys, one line) so it can be embedded verbatim in an
/// event line and sent in one peer message.
public struct ProfileCard: Sendable, Equatable {
    public let json: String

    public enum Invalid: Error, CustomStringConvertible, Equatable {
        case notJSONObject(String)
        case tooLarge(Int)

        public var description: String {
            switch self {
            case .notJSONObject(let why): "a profile card must be a JSON object: \(why)"
            case .tooLarge(let size):
                "the profile card is \(size) bytes once compacted; the limit is \(PeerMessage.maxCardBytes)"
            }
        }
    }

    /// Validates and canonicalises JSON from a file or from a peer (never trusted as-is: a peer's
    /// text is re-serialised, so it cannot smuggle a newline or broken JSON into our stdout).
    public init(json text: String) throws(Invalid) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch {
            throw .notJSONObject(error.localizedDescription)
        }
        guard object is [String: Any] else { throw .notJSONObject("top level is not an object") }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]),
            let canonical = String(data: data, encoding: .utf8)
        else { throw .notJSONObject("cannot re-serialise") }
        guard canonical.utf8.count <= PeerMessage.maxCardBytes else { throw .tooLarge(canonical.utf8.count) }
        json = canonical
    }

    public init(name: String) {
        // Built from a string we escape ourselves, so it cannot fail.
        json = try! ProfileCard(json: "{\"name\":\(Self.quoted(name))}").json
    }

    private static func quoted(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}
