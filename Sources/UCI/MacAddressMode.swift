import ByteCoding

/// MAC_ADDRESS_MODE app config values; modes 1 and 2 both use 8-octet addresses in UCI.
package enum MacAddressMode: UInt8, Sendable {
    case short = 0, extendedWithShortHeader = 1, extended = 2

    var addressSize: Int { self == .short ? 2 : 8 }
}
