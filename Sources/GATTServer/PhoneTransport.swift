/// A GATT service a phone's app carries its out-of-band messages over, by the name a rig's
/// configuration (`phoneServices`) and a scenario use for it: Apple's accessory messages over
/// Qorvo's or Nordic's service, Android's ranging OOB over the rig's own.
package enum PhoneTransport: String, Codable, CaseIterable, Sendable {
    /// Qorvo's Nearby Interaction service (its sample app's transport).
    case qorvoNearbyInteraction = "qorvo-ni"
    /// The Nordic UART service (Apple's accessory sample app's transport).
    case nordicUART = "nordic-uart"
    /// The rig's own service for Android's ranging OOB messages (`AndroidOOBGATTService`).
    case androidOOB = "android-oob"

    /// The protocols phones speak to a rig.
    package enum PhoneProtocol: Sendable {
        /// Apple's Nearby Interaction accessory protocol.
        case appleAccessory
        /// Android's ranging OOB specification.
        case androidRangingOOB
        /// The rig's own layout of Jetpack's `RangingParameters` (docs/android-jetpack.md), on
        /// the Android service's `jetpack` characteristic.
        case jetpackParameters
    }

    /// What the service carries.
    package var phoneProtocol: PhoneProtocol {
        switch self {
        case .qorvoNearbyInteraction, .nordicUART: .appleAccessory
        case .androidOOB: .androidRangingOOB
        }
    }

    package var service: GATTService {
        switch self {
        case .qorvoNearbyInteraction: AccessoryGATTService.qorvoNearbyInteraction.service
        case .nordicUART: AccessoryGATTService.nordicUART.service
        case .androidOOB: AndroidOOBGATTService.service
        }
    }

    /// The service's UUID, for an advertisement that names it.
    package var serviceUUID: GATTUUID {
        switch self {
        case .qorvoNearbyInteraction: AccessoryGATTService.qorvoService
        case .nordicUART: AccessoryGATTService.uartService
        case .androidOOB: AndroidOOBGATTService.serviceUUID
        }
    }

    /// The characteristic the phone writes its messages to, and the one the rig notifies on.
    package var characteristics: (write: GATTUUID, notify: GATTUUID) {
        switch self {
        case .qorvoNearbyInteraction: (AccessoryGATTService.qorvoRX, AccessoryGATTService.qorvoTX)
        case .nordicUART: (AccessoryGATTService.uartRX, AccessoryGATTService.uartTX)
        case .androidOOB: (AndroidOOBGATTService.phoneToRig, AndroidOOBGATTService.rigToPhone)
        }
    }

    /// The protocol a write on `characteristic` speaks, and where its answers go; nil for a
    /// characteristic no phone protocol writes.
    package static func route(write characteristic: GATTUUID) -> (PhoneProtocol, answerOn: GATTUUID)? {
        if characteristic == AndroidOOBGATTService.jetpack { return (.jetpackParameters, AndroidOOBGATTService.jetpack) }
        guard let transport = allCases.first(where: { $0.characteristics.write == characteristic }) else { return nil }
        return (transport.phoneProtocol, transport.characteristics.notify)
    }

    /// The database a rig offering `transports` serves: them in the order given, then the
    /// attendee token service (always there when phones are served), with the Generic Access
    /// service first for a backend that serves ATT itself (`deviceName` non-nil).
    package static func database(offering transports: [PhoneTransport], deviceName: String? = nil) -> GATTDatabase {
        let access = deviceName.map { [AccessoryGATTService.genericAccess(deviceName: $0).service] } ?? []
        return GATTDatabase(access + transports.map(\.service) + [AccessoryGATTService.attendeeToken.service])
    }
}
