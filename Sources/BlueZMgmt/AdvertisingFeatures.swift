/// Read Advertising Features return parameters.
package struct AdvertisingFeatures: Equatable, Sendable {
    package var supportedFlags: AdvertisingFlags
    package var maxDataLength: UInt8
    package var maxScanResponseLength: UInt8
    package var maxInstances: UInt8
    package var instances: [UInt8]

    /// The highest instance no one uses now (bluetoothd allocates from 1 upward), or nil when
    /// every one is taken.
    package func freeInstance() -> UInt8? {
        guard maxInstances > 0 else { return nil }
        return (1...maxInstances).reversed().first { !instances.contains($0) }
    }

    package init(returnParameters: [UInt8]) throws(MgmtError) {
        var r = Reader(returnParameters, context: "advertising features")
        supportedFlags = AdvertisingFlags(rawValue: try r.u32("supported_flags"))
        maxDataLength = try r.u8("max_adv_data_len")
        maxScanResponseLength = try r.u8("max_scan_rsp_len")
        maxInstances = try r.u8("max_instances")
        let count = Int(try r.u8("num_instances"))
        instances = Array(try r.take(count, "instances"))
    }

    /// Whether to use mgmt's extended advertising interface: the controller has LE extended
    /// advertising (the kernel offers the secondary PHYs only then) and the kernel takes
    /// interval and timeout in Add Extended Advertising Parameters (5.10 and later).
    package var offersExtendedAdvertising: Bool {
        supportedFlags.isSuperset(of: [.secondaryLE1M, .parameterTimeout, .parameterIntervals])
    }
}
