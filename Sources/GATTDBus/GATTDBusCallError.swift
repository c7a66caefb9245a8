/// Why a call from bluetoothd got an error back: the D-Bus error name (those BlueZ's GATT API
/// lists, doc/org.bluez.GattCharacteristic.rst) and a text for the log.
enum GATTDBusCallError: Error, CustomStringConvertible {
    /// The call is not allowed on this characteristic, or its value or offset is out of range.
    case refused(String, String)
    /// The arguments could not be read as the method's signature says.
    case malformed(BusFailure)
    /// The answer could not be built or sent.
    case bus(BusFailure)

    var name: String {
        switch self {
        case .refused(let name, _): name
        case .malformed: "org.freedesktop.DBus.Error.InvalidArgs"
        case .bus: "org.bluez.Error.Failed"
        }
    }

    var message: String {
        switch self {
        case .refused(_, let text): text
        case .malformed(let failure), .bus(let failure): failure.description
        }
    }

    var description: String { "\(name): \(message)" }

    /// `body`'s result; its bus failure becomes `wrap`'s error: `.malformed` where it read the
    /// call's arguments, `.bus` where it built or sent the answer.
    static func wrapping<T>(_ wrap: (BusFailure) -> GATTDBusCallError, _ body: () throws(BusFailure) -> T) throws(GATTDBusCallError) -> T {
        do {
            return try body()
        } catch {
            throw wrap(error)
        }
    }
}
