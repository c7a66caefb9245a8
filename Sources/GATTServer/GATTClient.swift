/// One client of the rig's GATT server, as its backend names it: the kernel ATT backend numbers
/// its channels, the D-Bus backend uses bluetoothd's device object path. The node only compares
/// and routes by it, so both backends' clients look alike there.
package struct GATTClient: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var name: String

    package init(_ name: String) {
        self.name = name
    }

    package var description: String { name }

    package static func < (a: GATTClient, b: GATTClient) -> Bool { a.name < b.name }
}
