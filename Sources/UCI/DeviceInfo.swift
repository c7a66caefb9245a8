import ByteCoding

/// The body of a CORE_GET_DEVICE_INFO_RSP after its status.
package struct DeviceInfo: Hashable, Sendable {
    package var uciVersion: UCIVersion
    package var macVersion: UCIVersion
    package var phyVersion: UCIVersion
    package var uciTestVersion: UCIVersion
    /// Vendor-specific octets (at most 255).
    package var vendorData: [UInt8]

    package init(
        uciVersion: UCIVersion, macVersion: UCIVersion, phyVersion: UCIVersion,
        uciTestVersion: UCIVersion, vendorData: [UInt8]
    ) {
        self.uciVersion = uciVersion
        self.macVersion = macVersion
        self.phyVersion = phyVersion
        self.uciTestVersion = uciTestVersion
        self.vendorData = vendorData
    }

    /// The vendor data as lowercase hex, two digits per octet.
    package var vendorDataHex: String {
        vendorData.hexString
    }

    /// The name a board's calibration is filed under: its USB serial number when it has one, else
    /// "vendor:" and its vendor data in hex (a virtual board's carries its number). Stable across
    /// replugs and ports; the `board` of the `device` event and the key `doctor` looks up.
    package func boardKey(serial: String?) -> String {
        serial ?? "vendor:" + vendorDataHex
    }
}
