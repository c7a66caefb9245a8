/// The rig's own GATT service carrying Android's ranging OOB messages (`AndroidOOBResponder`)
/// between a phone app and the rig: Android's Ranging module leaves the OOB transport to the app
/// (`TransportHandle`), so the service is ours, with random (version 4) UUIDs drawn once for
/// nearby-bridge.
///
/// Framing: one whole OOB message per ATT write (phone → rig, Write Request, so the phone's
/// `TransportHandle` learns of a lost write) and one per notification (rig → phone). There is no
/// segmentation, so the phone must raise ATT_MTU before the exchange (the app calls
/// `BluetoothGatt.requestMtu`, 517 on Android): a version 1 Capability Response with UWB is 24
/// octets and a Configuration with an 8-octet key 33, both past the default MTU's 23 − 3 = 20.
/// The server answers no Prepare Write, so an over-long write is refused by ATT itself; a
/// message too long to notify is refused by `notification(_:attMTU:)` with a reason, never cut.
///
/// The third characteristic, `jetpack`, carries the rig's own Jetpack layout
/// (`JetpackRequest`/`JetpackAnswer`, docs/android-jetpack.md) for apps that range with Jetpack's
/// `androidx.core.uwb` and bring their own out-of-band exchange: the app writes its parameters
/// (28 octets with a static STS key, so it too raises ATT_MTU first, to 31 at least) and is
/// answered by notifications on the same characteristic (8 octets at most). One characteristic for
/// both directions, since each side of that exchange has one message kind per step.
package enum AndroidOOBGATTService {
    package static let serviceUUID = GATTUUID("06194915-A217-44BC-BA00-27EA8D8AEE13")!
    /// Phone → rig: write (with response) only.
    package static let phoneToRig = GATTUUID("9D0B0BD4-F02E-49E3-85AC-589BCA0FBB03")!
    /// Rig → phone: notify only, with its client characteristic configuration descriptor.
    package static let rigToPhone = GATTUUID("2E565238-39EC-4BAF-BA4D-116F384094C4")!
    /// Jetpack parameters and stops (phone → rig, write with response) and the rig's answers
    /// (notify, with its client characteristic configuration descriptor).
    package static let jetpack = GATTUUID("5635A83A-DAA4-4B8D-89B0-5B6C66A2F8B8")!

    /// The smallest ATT_MTU at which every message the rig sends (a version 2 or 3 Capability
    /// Response with UWB: 27 octets) fits one notification.
    package static let minimumATTMTU = 30

    /// The service as `GATTDatabase` lays it out; offered beside `AccessoryGATTService`'s.
    package static let service = GATTService(
        serviceUUID,
        characteristics: [
            GATTCharacteristic(phoneToRig, properties: .write),
            GATTCharacteristic(rigToPhone, properties: .notify),
            GATTCharacteristic(jetpack, properties: [.write, .notify]),
        ])

    /// `message` as one notification's value at `attMTU`, or why it cannot be one.
    package static func notification(_ message: [UInt8], attMTU: Int) throws(AndroidOOBFramingError) -> [UInt8] {
        guard message.count <= attMTU - 3 else { throw .exceedsMTU(length: message.count, attMTU: attMTU) }
        return message
    }
}
