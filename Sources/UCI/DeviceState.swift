/// CORE_DEVICE_STATUS_NTF state. Closed: an unknown value is a protocol error.
package enum DeviceState: UInt8, Sendable {
    case ready = 0x01, active = 0x02, error = 0xFF
}
