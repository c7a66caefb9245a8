package struct CDCInterfaces: Sendable, Equatable {
    /// The communication (control) interface, which takes SET_CONTROL_LINE_STATE; some boards have none.
    package var control: UInt8?
    package var data: UInt8
    package var bulkIn: UInt8
    package var bulkOut: UInt8
    package var maxPacketSize: UInt16
}
