/// SESSION_INFO_NTF ranging_measurement_type. Only two-way ranging is decoded in full.
package enum MeasurementType: UInt8, Sendable {
    case oneWay = 0, twoWay = 1, downlinkTDoA = 2, owrAoA = 3
}
