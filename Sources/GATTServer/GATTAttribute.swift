/// One row of the attribute table a server exposes (Core Specification Vol 3 Part F §3.2): a
/// handle, a type, and what the row is, which decides its value and permissions.
package struct GATTAttribute: Hashable, Sendable {
    package enum Kind: Hashable, Sendable {
        /// A primary service declaration (0x2800); `endHandle` closes its group.
        case serviceDeclaration(endHandle: UInt16)
        /// A characteristic declaration (0x2803).
        case characteristicDeclaration
        /// A characteristic's value: index into `GATTDatabase.characteristics`.
        case characteristicValue(characteristic: Int)
        /// A characteristic's client characteristic configuration descriptor (0x2902).
        case clientConfiguration(characteristic: Int)
    }

    package let handle: UInt16
    package let type: GATTUUID
    package let kind: Kind
    /// The value the layout gives it: a declaration's octets, a characteristic's initial value,
    /// a configuration's 00 00. The server keeps per-connection values on top of this.
    package let value: [UInt8]

    /// The group a declaration opens, for Read By Group Type and Find By Type Value (Vol 3
    /// Part F §3.4.3.4, §3.4.4.9); a plain attribute is its own group.
    package var groupEndHandle: UInt16 {
        if case .serviceDeclaration(let end) = kind { return end }
        return handle
    }

    /// Only a characteristic's value changes length; declarations and 0x2902 have fixed ones.
    package var hasVariableLength: Bool {
        if case .characteristicValue = kind { return true }
        return false
    }
}
