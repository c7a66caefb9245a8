import Synchronization

/// The `node` + `seq` pairs seen, a bounded number per node (QoS 1 repeats come soon after).
struct SeenEvents {
    private var recent: [String: (order: [UInt64], set: Set<UInt64>)] = [:]
    static let perNode = 100_000

    /// Whether `line` (an event's JSON line) was not seen before; lines without both fields pass.
    mutating func isNew(_ line: String) -> Bool {
        guard let node = Self.field("node", in: line), let seqText = Self.field("seq", in: line), let seq = UInt64(seqText) else {
            return true
        }
        var entry = recent[node] ?? ([], [])
        guard entry.set.insert(seq).inserted else { return false }
        entry.order.append(seq)
        if entry.order.count > Self.perNode { entry.set.remove(entry.order.removeFirst()) }
        recent[node] = entry
        return true
    }

    /// A top-level string or number field of a schema-v1 line (`"name":"value"` or `"name":123`).
    static func field(_ name: String, in line: String) -> String? {
        guard let range = line.firstRange(of: "\"\(name)\":") else { return nil }
        var rest = line[range.upperBound...]
        if rest.first == "\"" {
            rest = rest.dropFirst()
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
        return String(rest.prefix { $0.isNumber })
    }
}
