/// DEVICE_TYPE values.
package enum DeviceType: UInt8, Sendable { case controlee = 0, controller = 1 }
