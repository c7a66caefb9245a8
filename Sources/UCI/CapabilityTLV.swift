import ByteCoding

/// One CORE_GET_CAPS_INFO_RSP TLV. The type stays raw: 1.x and 2.0 number them differently.
package struct CapabilityTLV: Hashable, Sendable {
    package var type: UInt8
    package var value: [UInt8]

    package init(type: UInt8, value: [UInt8]) {
        self.type = type
        self.value = value
    }
}
