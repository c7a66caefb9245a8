/// Which keys a JSON settings or scenario file may have, level by level: a key nothing reads (a
/// typo such as "groupKeyFlie") must be an error, not a setting silently left at its default — a
/// rig whose event key was misspelt would run unkeyed, in the clear.
package indirect enum KnownKeys: Sendable {
    /// An object with exactly these keys, each value of its shape.
    case object([String: KnownKeys])
    /// An object whose keys are data (boards by serial), every value of one shape.
    case map(KnownKeys)
    /// An array, every element of one shape.
    case array(KnownKeys)
    /// Anything: a value, or an object whose keys are the user's own (a profile card).
    case open

    /// An object with the keys `Keys` lists, of the shapes in `nested`, anything under the others.
    package static func object<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type, _ nested: [String: KnownKeys] = [:]) -> KnownKeys {
        .object(Dictionary(uniqueKeysWithValues: keys.allCases.map { ($0.stringValue, nested[$0.stringValue] ?? .open) }))
    }

    /// A key the shape does not know, where it is and what was probably meant.
    package struct Unknown: Sendable, Equatable, CustomStringConvertible {
        /// "mqtt.clientID", "nodes.2.boardOfset"
        package var path: String
        package var suggestion: String?

        package var description: String {
            "unknown key \"\(path)\"" + (suggestion.map { " (did you mean \"\($0)\"?)" } ?? "")
        }
    }

    /// Every key of `json` (as JSONSerialization returns it) that this shape does not know, in
    /// the order of the path.
    package func unknownKeys(in json: Any, at path: [String] = []) -> [Unknown] {
        switch (self, json) {
        case (.object(let known), let object as [String: Any]):
            return object.keys.sorted().flatMap { key -> [Unknown] in
                guard let shape = known[key] else {
                    return [Unknown(path: (path + [key]).joined(separator: "."), suggestion: Self.closest(to: key, among: known.keys))]
                }
                return shape.unknownKeys(in: object[key]!, at: path + [key])
            }
        case (.map(let shape), let object as [String: Any]):
            return object.keys.sorted().flatMap { shape.unknownKeys(in: object[$0]!, at: path + [$0]) }
        case (.array(let shape), let array as [Any]):
            return array.indices.flatMap { shape.unknownKeys(in: array[$0], at: path + [String($0)]) }
        default:
            return []  // a type mismatch is the decoder's to report
        }
    }

    /// The known key within a third of its length in edits (two at least), if there is one: the
    /// typo's likely intent. Ties go to the first in alphabetical order.
    static func closest(to key: String, among known: some Collection<String>) -> String? {
        let limit = max(2, key.count / 3)
        return known.sorted().map { ($0, editDistance(key.lowercased(), $0.lowercased())) }
            .filter { $0.1 <= limit }.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance (insertions, deletions, substitutions).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
