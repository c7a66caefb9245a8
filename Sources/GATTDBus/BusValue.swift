/// The D-Bus values the GATT backend sends and receives: the few types BlueZ's GATT API uses
/// (doc/org.bluez.GattService.rst, org.bluez.GattCharacteristic.rst), each with its signature.
package enum BusValue: Hashable, Sendable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case uint16(UInt16)
    case strings([String])
    case bytes([UInt8])
    case objectPaths([String])

    /// The D-Bus type signature of the value.
    package var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .uint16: "q"
        case .strings: "as"
        case .bytes: "ay"
        case .objectPaths: "ao"
        }
    }
}
