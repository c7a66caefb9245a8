/// A GATT service a phone's app may carry Apple's accessory messages over, by the name a rig's
/// configuration (`phoneServices`) and a scenario use for it.
package enum PhoneTransport: String, Codable, CaseIterable, Sendable {
    /// Qorvo's Nearby Interaction service (its sample app's transport).
    case qorvoNearbyInteraction = "qorvo-ni"
    /// The Nordic UART service (Apple's accessory sample app's transport).
    case nordicUART = "nordic-uart"

    package var service: AccessoryGATTService {
        switch self {
        case .qorvoNearbyInteraction: .qorvoNearbyInteraction
        case .nordicUART: .nordicUART
        }
    }

    /// The service's UUID, for an advertisement that names it.
    package var serviceUUID: GATTUUID {
        switch self {
        case .qorvoNearbyInteraction: AccessoryGATTService.qorvoService
        case .nordicUART: AccessoryGATTService.uartService
        }
    }

    /// The characteristic the phone writes its messages to, and the one the rig notifies on.
    package var characteristics: (write: GATTUUID, notify: GATTUUID) {
        switch self {
        case .qorvoNearbyInteraction: (AccessoryGATTService.qorvoRX, AccessoryGATTService.qorvoTX)
        case .nordicUART: (AccessoryGATTService.uartRX, AccessoryGATTService.uartTX)
        }
    }

    /// The database a rig offering `transports` serves: them in the order given, then the
    /// attendee token service (always there when phones are served), with the Generic Access
    /// service first for a backend that serves ATT itself (`deviceName` non-nil).
    package static func database(offering transports: [PhoneTransport], deviceName: String? = nil) -> GATTDatabase {
        let access = deviceName.map { [AccessoryGATTService.genericAccess(deviceName: $0)] } ?? []
        return AccessoryGATTService.database(offering: access + transports.map(\.service) + [.attendeeToken])
    }
}
