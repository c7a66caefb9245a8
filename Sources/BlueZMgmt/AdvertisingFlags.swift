/// Add Advertising flags (doc/mgmt-protocol.rst, Add Advertising).
package struct AdvertisingFlags: OptionSet, Hashable, Sendable {
    package var rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let connectable = AdvertisingFlags(rawValue: 1 << 0)
    /// The kernel inserts the Flags AD (general discoverable); our data must not carry one.
    package static let discoverable = AdvertisingFlags(rawValue: 1 << 1)
    package static let limitedDiscoverable = AdvertisingFlags(rawValue: 1 << 2)
    package static let managedFlags = AdvertisingFlags(rawValue: 1 << 3)
    package static let txPower = AdvertisingFlags(rawValue: 1 << 4)
    /// Secondary PHYs: set on an instance, the advert goes out as extended advertising PDUs; in
    /// Read Advertising Features, the controller has LE extended advertising (the kernel then
    /// drives it with the extended HCI commands).
    package static let secondaryLE1M = AdvertisingFlags(rawValue: 1 << 7)
    package static let secondaryLE2M = AdvertisingFlags(rawValue: 1 << 8)
    package static let secondaryLECoded = AdvertisingFlags(rawValue: 1 << 9)
    package static let canSetTxPower = AdvertisingFlags(rawValue: 1 << 10)
    /// Add Extended Advertising Parameters: which optional fields the command sets (kernel 5.10).
    package static let parameterDuration = AdvertisingFlags(rawValue: 1 << 12)
    package static let parameterTimeout = AdvertisingFlags(rawValue: 1 << 13)
    package static let parameterIntervals = AdvertisingFlags(rawValue: 1 << 14)
    package static let parameterTxPower = AdvertisingFlags(rawValue: 1 << 15)
    package static let parameterScanResponse = AdvertisingFlags(rawValue: 1 << 16)
}
