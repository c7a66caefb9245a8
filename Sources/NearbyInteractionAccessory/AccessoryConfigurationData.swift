import ByteCoding
import UCI

/// What the rig sends a phone in answer to `initialize` (message 0x01): the blob the phone's app
/// passes to `NINearbyAccessoryConfiguration(data:)`. Layout (little-endian, Apple's Nearby
/// Interaction Accessory Protocol Specification R4; AOSP's `IosAccessoryConfigurationData` and
/// the nRF accessory firmware `brian-level/nrfuwb` write the same):
///
///     0  major version (2) = 1       2  minor version (2) = 0
///     4  preferred update rate (1)   5  reserved (10), zero
///     15 length of what follows (1): 21 for UWB configuration data 1.1, 32 for 2.0
///     16 UWB configuration data:
///        +0 major (2)  +2 minor (2)  +4 manufacturer id (4)  +8 model id (4)
///        +12 middleware version (4)  +16 device role (1)  +17 short address (2)
///        +19 maximum clock drift in ppm (2)
///        2.0 only: +21 reserved (4)  +25 hopping (1)  +26 slots per round (2)
///        +28 slot duration in RSTU (2)  +30 ranging interval in ms (2)
///
/// The rig is always the responder (a controlee): the phone runs the session, as in every
/// accessory sample.
package struct AccessoryConfigurationData: Equatable, Sendable {
    package var version: UWBConfigurationVersion
    package var preferredUpdateRate: PreferredUpdateRate
    /// The UWB chipset's manufacturer and model as Apple numbers them for certified chipsets.
    /// That list is not public; 0 and 0 are what AOSP's ranging test app sends (its builder's
    /// defaults), claiming no chipset. Whether an iPhone accepts them is untested.
    package var manufacturerID: UInt32 = 0
    package var modelID: UInt32 = 0
    /// The accessory's UWB middleware version; 0 as in AOSP's ranging test app.
    package var middlewareVersion: UInt32 = 0
    /// The rig's short address, written little-endian (as every address the bridge gives UCI).
    package var shortAddress: UInt16
    /// The IEEE 802.15.4z HRP PHY's clock tolerance, ±20 ppm: the board's own figure is not
    /// reported over UCI.
    package var maxClockDriftPPM: UInt16 = 20
    /// Version 2.0's wishes: hopping when the board can hop; six slots per round (the fewest a
    /// DS-TWR deferred round with its control and report messages needs, as AOSP's test app
    /// asks); 2400 RSTU (2 ms) slots; a round every 240 ms (AOSP's "normal" update rate).
    package var hopping: Bool
    package var slotsPerRound: UInt16 = 6
    package var slotDurationRSTU: UInt16 = 2400
    package var rangingIntervalMilliseconds: UInt16 = 240

    /// The rig's configuration data for a board with `capabilities` at `shortAddress`.
    package init(
        version: UWBConfigurationVersion, shortAddress: UInt16, capabilities: AccessoryCapabilities,
        preferredUpdateRate: PreferredUpdateRate = .automatic
    ) {
        self.version = version
        self.shortAddress = shortAddress
        self.preferredUpdateRate = preferredUpdateRate
        hopping = capabilities.hopping
    }

    /// The header's own version, 1.0, in every sample and firmware that writes one.
    package static let headerMajor: UInt16 = 1
    package static let headerMinor: UInt16 = 0

    /// The blob, header and UWB configuration data (without the message id).
    package var encoded: [UInt8] {
        var uwb: [UInt8] = []
        uwb.appendLE(version.major)
        uwb.appendLE(version.minor)
        uwb.appendLE(manufacturerID)
        uwb.appendLE(modelID)
        uwb.appendLE(middlewareVersion)
        uwb.append(DeviceRole.responder.rawValue)
        uwb.appendLE(shortAddress)
        uwb.appendLE(maxClockDriftPPM)
        if version == .v2_0 {
            uwb.append(contentsOf: [0, 0, 0, 0])
            uwb.append(hopping ? 1 : 0)
            uwb.appendLE(slotsPerRound)
            uwb.appendLE(slotDurationRSTU)
            uwb.appendLE(rangingIntervalMilliseconds)
        }
        var bytes: [UInt8] = []
        bytes.appendLE(Self.headerMajor)
        bytes.appendLE(Self.headerMinor)
        bytes.append(preferredUpdateRate.rawValue)
        bytes.append(contentsOf: [UInt8](repeating: 0, count: 10))
        bytes.append(UInt8(uwb.count))
        return bytes + uwb
    }
}
