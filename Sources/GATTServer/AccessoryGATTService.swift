/// The services a rig offers an iPhone's Nearby Interaction app (issue 33), and the database
/// they make. Which ones are offered is configuration; the database lays them out in the order
/// given. The UUIDs and properties of Qorvo's and Nordic's services are what their public
/// firmware and sample apps use (docs/PROTOCOL.md, "Phones: the GATT database").
package enum AccessoryGATTService: Hashable, Sendable {
    /// Qorvo's Nearby Interaction service: the phone writes Apple's accessory messages to RX,
    /// the rig notifies its answers on TX; reading SEC (only over an encrypted link) is how
    /// Qorvo's app gets the phone to pair.
    case qorvoNearbyInteraction
    /// The Nordic UART service, the other transport Apple's sample app uses: RX written by the
    /// phone, TX notified by the rig.
    case nordicUART
    /// Our own service with one characteristic an event's app may write an attendee token to
    /// (up to 64 octets; unauthenticated, the event's backend verifies it).
    case attendeeToken
    /// The Generic Access service (Device Name, Appearance) every GATT server needs (Core
    /// Specification Vol 3 Part C §12); for a backend that serves ATT itself, since bluetoothd
    /// serves its own where it runs.
    case genericAccess(deviceName: String)

    package static let qorvoService = GATTUUID("2E938FD0-6A61-11ED-A1EB-0242AC120002")!
    package static let qorvoSecure = GATTUUID("2E93941C-6A61-11ED-A1EB-0242AC120002")!
    package static let qorvoRX = GATTUUID("2E93998A-6A61-11ED-A1EB-0242AC120002")!
    package static let qorvoTX = GATTUUID("2E939AF2-6A61-11ED-A1EB-0242AC120002")!
    package static let uartService = GATTUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!
    package static let uartRX = GATTUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")!
    package static let uartTX = GATTUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")!
    /// Random (version 4) UUIDs of our own, drawn once for nearby-bridge.
    package static let tokenService = GATTUUID("2ED41668-154D-4053-A64F-10BF69A2A46E")!
    package static let tokenCharacteristic = GATTUUID("DE2765D7-CFF1-4EF1-A826-3165F492577D")!
    /// Appearance (0x2A01) and its value 0x0000, "Unknown" (Assigned Numbers §2.6).
    package static let appearance = GATTUUID(0x2A01)

    /// The longest attendee token.
    package static let maximumTokenLength = 64
    /// What SEC reads as. Qorvo's firmware answers its name; nothing reads the octets.
    package static let secureValue = Array("nearby-bridge".utf8)

    /// The service as the database lays it out.
    package var service: GATTService {
        switch self {
        case .qorvoNearbyInteraction:
            GATTService(
                Self.qorvoService,
                characteristics: [
                    GATTCharacteristic(Self.qorvoSecure, properties: .read, value: Self.secureValue, readRequiresEncryption: true),
                    GATTCharacteristic(Self.qorvoRX, properties: [.write, .writeWithoutResponse]),
                    GATTCharacteristic(Self.qorvoTX, properties: .notify),
                ])
        case .nordicUART:
            GATTService(
                Self.uartService,
                characteristics: [
                    GATTCharacteristic(Self.uartRX, properties: [.write, .writeWithoutResponse]),
                    GATTCharacteristic(Self.uartTX, properties: .notify),
                ])
        case .attendeeToken:
            GATTService(
                Self.tokenService,
                characteristics: [GATTCharacteristic(Self.tokenCharacteristic, properties: .write, maximumLength: Self.maximumTokenLength)])
        case .genericAccess(let name):
            GATTService(
                .genericAccess,
                characteristics: [
                    GATTCharacteristic(.deviceName, properties: .read, value: Array(name.utf8.prefix(248))),
                    GATTCharacteristic(Self.appearance, properties: .read, value: [0x00, 0x00]),
                ])
        }
    }

    /// The database offering `services`, in that order.
    package static func database(offering services: [AccessoryGATTService]) -> GATTDatabase {
        GATTDatabase(services.map(\.service))
    }
}
