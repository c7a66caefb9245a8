/// The accessory configuration data's preferred update rate octet: how often the accessory
/// would like the phone to range. The values are the ones AOSP's `IosAccessoryConfigurationData`
/// (`UpdateRateOption`) and the nRF/NXP accessory firmwares write.
package enum PreferredUpdateRate: UInt8, Sendable {
    /// Let the phone choose.
    case automatic = 0
    /// Ranging now and then; saves the phone's battery.
    case infrequent = 10
    /// As often as a user interacting with the accessory needs.
    case userInteractive = 20
}
