/// Which octet order UCI gets the vendor id and the two short addresses in. Public sources do not
/// settle it. AOSP's ranging test app (`IosAccessoryConfigurationData`,
/// `IosAccessoryRangingParameters`) copies the address octets from the blobs untouched, beside a
/// comment that says it handles "the endian difference between Apple and Android", and writes
/// the vendor id as 4C 00 ("little endian of 0x004C"); AOSP's UWB service (`FiraEncoder`) passes
/// both on unchanged since Android 14 and reversed them before. So the default is AOSP's code,
/// and the order its comment and older service imply is one setting away.
package enum AccessoryOctetOrder: CaseIterable, Sendable {
    /// AOSP's code (the default): the addresses' octets as the blobs carry them, VENDOR_ID 4C 00.
    case asInBlobs
    /// Each of the three reversed: the addresses' octets swapped, VENDOR_ID 00 4C.
    case reversed
}
