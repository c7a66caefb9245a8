/// Add Extended Advertising Parameters return parameters: what the kernel granted the instance.
package struct ExtendedAdvertisingGrant: Equatable, Sendable {
    package var instance: UInt8
    /// The TX power the controller selected (dBm; 127 when it did not say).
    package var txPower: Int8
    package var maxDataLength: UInt8
    package var maxScanResponseLength: UInt8

    package init(instance: UInt8, txPower: Int8, maxDataLength: UInt8, maxScanResponseLength: UInt8) {
        self.instance = instance
        self.txPower = txPower
        self.maxDataLength = maxDataLength
        self.maxScanResponseLength = maxScanResponseLength
    }

    package init(returnParameters: [UInt8]) throws(MgmtError) {
        var r = Reader(returnParameters, context: "extended advertising parameters")
        instance = try r.u8("instance")
        txPower = Int8(bitPattern: try r.u8("tx_power"))
        maxDataLength = try r.u8("max_adv_data_len")
        maxScanResponseLength = try r.u8("max_scan_rsp_len")
    }
}
