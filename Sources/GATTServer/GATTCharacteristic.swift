/// One characteristic as the bridge defines it; `GATTDatabase` gives it handles. A
/// characteristic that notifies or indicates gets a client characteristic configuration
/// descriptor (0x2902) after its value, as GATT requires (Core Specification Vol 3 Part G
/// §3.3.3.3).
package struct GATTCharacteristic: Hashable, Sendable {
    package var uuid: GATTUUID
    package var properties: GATTCharacteristicProperties
    /// What a read returns until a client writes it (readable characteristics only).
    package var value: [UInt8]
    /// The longest value a client may write: 512 is ATT's own ceiling (Vol 3 Part F §3.2.9).
    package var maximumLength: Int
    /// Reads need an encrypted link (Qorvo's secure characteristic: reading it is how its app
    /// makes the phone pair). The server answers Insufficient Encryption until the backend says
    /// the link is encrypted.
    package var readRequiresEncryption: Bool

    package init(
        _ uuid: GATTUUID, properties: GATTCharacteristicProperties, value: [UInt8] = [], maximumLength: Int = 512,
        readRequiresEncryption: Bool = false
    ) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
        self.maximumLength = min(maximumLength, 512)
        self.readRequiresEncryption = readRequiresEncryption
    }

    /// Whether the layout gives it a client characteristic configuration descriptor.
    package var hasClientConfiguration: Bool { !properties.isDisjoint(with: [.notify, .indicate]) }
}
