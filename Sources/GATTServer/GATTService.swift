/// One primary service as the bridge defines it: its characteristics in the order the layout
/// gives them handles.
package struct GATTService: Hashable, Sendable {
    package var uuid: GATTUUID
    package var characteristics: [GATTCharacteristic]

    package init(_ uuid: GATTUUID, characteristics: [GATTCharacteristic]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}
