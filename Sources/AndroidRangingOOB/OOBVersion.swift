/// The first octet of every message: the version of Android's "Ranging: Out-of-band message
/// sequence and payload specification" (source.android.com, docs/core/connect/ranging-oob-spec,
/// and ranging-oob-spec-v3) the sender wrote it in. The version decides two layouts: a Capability
/// Response carries the transitioning and device-type octets from version 2, a Ranging
/// Configuration the motion octet from version 3. Versions the spec has not published are refused
/// rather than guessed at (`OOBMessageError.unsupportedVersion`).
package enum OOBVersion: UInt8, CaseIterable, Comparable, Sendable, CustomStringConvertible {
    case v1 = 1
    case v2 = 2
    /// Android 17's, published as "Out-of-band specification version 3".
    case v3 = 3

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    package var description: String { "version \(rawValue)" }
}
