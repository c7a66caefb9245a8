/// What an `AccessorySession` needs to know about the rig: the board it offers a phone, the
/// address it ranges from, and how long it waits for the board. One value for every phone of a
/// rig; the node builds it once the board has answered CORE_GET_CAPS_INFO.
package struct AccessorySessionSettings: Equatable, Sendable {
    /// The board's channels, preamble codes and hopping: what 0x01 offers and 0x0B is checked
    /// against.
    package var capabilities: AccessoryCapabilities
    /// The rig's UWB short address, in 0x01 and in DEVICE_MAC_ADDRESS.
    package var shortAddress: UInt16
    /// The UWB configuration data version 0x01 carries. 1.1 by default: the layout every iPhone
    /// with a U1 chip reads; 2.0 adds the rig's wishes for hopping and slots. A phone's 0x0B is
    /// accepted in either version (each checked against the board), whatever 0x01 said.
    package var version: UWBConfigurationVersion
    package var preferredUpdateRate: PreferredUpdateRate
    /// The octet order of the addresses and vendor id on UCI (`AccessoryOctetOrder`).
    package var octetOrder: AccessoryOctetOrder
    /// How long the board may take from the start being asked (SESSION_INIT, SET_APP_CONFIG,
    /// START) to SESSION_STATUS_NTF ACTIVE, in ms, before the session is given up.
    package var startTimeoutMilliseconds: Int64
    /// How long the board may take from the stop being asked (STOP, DEINIT) to
    /// SESSION_STATUS_NTF DEINIT, in ms, before the machine stops waiting.
    package var stopTimeoutMilliseconds: Int64

    /// 5 s either way: three UCI commands and their notifications take a few tens of
    /// milliseconds on a board that works (each response is due within UCI's command timeout),
    /// so 5 s is ample even behind another session's commands, and short enough that a phone
    /// that retries is not kept waiting long.
    package static let defaultTimeoutMilliseconds: Int64 = 5000

    package init(
        capabilities: AccessoryCapabilities, shortAddress: UInt16, version: UWBConfigurationVersion = .v1_1,
        preferredUpdateRate: PreferredUpdateRate = .automatic, octetOrder: AccessoryOctetOrder = .asInBlobs,
        startTimeoutMilliseconds: Int64 = Self.defaultTimeoutMilliseconds,
        stopTimeoutMilliseconds: Int64 = Self.defaultTimeoutMilliseconds
    ) {
        self.capabilities = capabilities
        self.shortAddress = shortAddress
        self.version = version
        self.preferredUpdateRate = preferredUpdateRate
        self.octetOrder = octetOrder
        self.startTimeoutMilliseconds = startTimeoutMilliseconds
        self.stopTimeoutMilliseconds = stopTimeoutMilliseconds
    }

    /// The 0x01 message's blob for this rig.
    package var accessoryConfigurationData: [UInt8] {
        AccessoryConfigurationData(
            version: version, shortAddress: shortAddress, capabilities: capabilities, preferredUpdateRate: preferredUpdateRate
        ).encoded
    }
}
