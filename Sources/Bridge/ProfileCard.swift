import Foundation
import PeerProtocol

/// The small JSON object a rig hands to a peer after a bump (name, links, whatever the event
/// wants). Stored in canonical form (sorted keys, one line) so it can be embedded verbatim in an
/// event line and sent in one peer message.
package struct ProfileCard: Sendable, Equatable {
    package let json: String

    package enum Invalid: Error, CustomStringConvertible, Equatable {
        case notJSONObject(String)
        case tooLarge(Int)

        package var description: String {
            switch self {
            case .notJSONObject(let why): "a profile card must be a JSON object: \(why)"
            case .tooLarge(let size):
                "the profile card is \(size) bytes once compacted; the limit is \(PeerMessage.maxCardBytes)"
            }
        }
    }

    /// Validates and canonicalises JSON from a file or from a peer (never trusted as-is: a peer's
    /// text is re-serialised, so it cannot smuggle a newline or broken JSON into our stdout).
    package init(json text: String) throws(Invalid) {
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

    /// The card `{"name": name}`. A name too long for the card is cut to its longest prefix that
    /// fits, at a Character boundary (never inside a UTF-8 sequence or a grapheme cluster).
    package init(name: String) {
        json = Self.nameCard(name)
    }

    /// The canonical card for the longest prefix of `name` whose card fits `PeerMessage.maxCardBytes`.
    static func nameCard(_ name: String) -> String {
        if let whole = card(named: Substring(name)) { return whole }
        // Every Character takes at least one byte, so no more than the byte limit of them fit;
        // and a card only grows as characters are added, so the longest prefix that fits is
        // found by bisection over the ends of the first `maxCardBytes` characters.
        let head = name.prefix(PeerMessage.maxCardBytes)
        var ends = Array(head.indices.dropFirst())
        ends.append(head.endIndex)
        var fits = name.startIndex  // the end of a prefix known to fit (the empty one does)
        var low = 0, high = ends.count  // candidates ends[low..<high]
        while low < high {
            let middle = (low + high) / 2
            if card(named: name[..<ends[middle]]) != nil {
                fits = ends[middle]
                low = middle + 1
            } else {
                high = middle
            }
        }
        return card(named: name[..<fits]) ?? "{\"name\":\"\"}"
    }

    /// The canonical card naming `name`, if it is within the limit.
    private static func card(named name: Substring) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: ["name": String(name)], options: [.sortedKeys, .withoutEscapingSlashes]),
            let card = try? ProfileCard(json: String(decoding: data, as: UTF8.self))
        else { return nil }
        return card.json
    }
}
