/// A 2-octet little-endian bitmap of technologies (the PDL's `TechnologySet`): bit n is the
/// technology with id n. Every message but the motion notification carries one or two of them.
/// Bits no published version assigns (4, 6-15) are refused when parsed, so a set that parses
/// names only technologies this codec knows.
package struct RangingTechnologySet: OptionSet, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt16
    package init(rawValue: UInt16) { self.rawValue = rawValue }

    package static let uwb = RangingTechnology.uwb.bit
    package static let bleChannelSounding = RangingTechnology.bleChannelSounding.bit
    package static let wifiNANRTT = RangingTechnology.wifiNANRTT.bit
    package static let bleRSSI = RangingTechnology.bleRSSI.bit
    package static let wifiPD = RangingTechnology.wifiPD.bit

    /// The bits the published versions assign.
    package static let assigned: RangingTechnologySet = RangingTechnology.allCases.reduce(into: []) { $0.insert($1.bit) }

    /// The set's technologies in id order.
    package var technologies: [RangingTechnology] { RangingTechnology.allCases.filter { contains($0.bit) } }

    package init(_ technologies: [RangingTechnology]) {
        self = technologies.reduce(into: []) { $0.insert($1.bit) }
    }

    package var description: String {
        "{" + technologies.map(\.description).joined(separator: ", ") + "}"
    }
}
