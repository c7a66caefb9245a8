import ByteCoding

/// A FiRa version as carried in CORE_GET_DEVICE_INFO_RSP.
///
/// Two octets: major, then minor << 4 | maintenance (pica sends UCI 2.0 as `02 00`, MAC 1.3 as `01 30`).
package struct UCIVersion: Hashable, Sendable, CustomStringConvertible {
    package var major: UInt8
    /// 4 bits on the wire.
    package var minor: UInt8
    /// 4 bits on the wire.
    package var maintenance: UInt8

    package init(major: UInt8, minor: UInt8, maintenance: UInt8) {
        self.major = major
        self.minor = minor
        self.maintenance = maintenance
    }

    init(octets: [UInt8]) {
        self.init(major: octets[0], minor: octets[1] >> 4, maintenance: octets[1] & 0x0F)
    }

    var octets: [UInt8] { [major, (minor & 0x0F) << 4 | maintenance & 0x0F] }

    /// "2.0.0"
    package var description: String { "\(major).\(minor).\(maintenance)" }
}
