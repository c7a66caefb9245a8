/// A 48-bit Bluetooth device address, most significant byte first in `description`.
package struct BLEAddress: Hashable, Sendable, CustomStringConvertible {
    /// Little-endian, as on the HCI wire.
    package var bytes: [UInt8]

    package init(bytes: [UInt8]) {
        precondition(bytes.count == 6, "a BD_ADDR is 6 bytes")
        self.bytes = bytes
    }

    package var description: String {
        bytes.reversed().map { b in (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true) }
            .joined(separator: ":")
    }
}
