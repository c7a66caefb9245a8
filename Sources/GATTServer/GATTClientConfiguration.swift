/// A client characteristic configuration descriptor's value (Core Specification Vol 3 Part G
/// §3.3.3.3): which server-initiated updates this client asked for. Per connection: a new
/// connection starts with none (an unbonded client; bonding is not kept here).
package struct GATTClientConfiguration: OptionSet, Hashable, Sendable {
    package let rawValue: UInt16
    package init(rawValue: UInt16) { self.rawValue = rawValue }

    package static let notifications = Self(rawValue: 0x0001)
    package static let indications = Self(rawValue: 0x0002)
}
