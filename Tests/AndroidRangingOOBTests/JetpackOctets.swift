@testable import AndroidRangingOOB

/// Jetpack messages written out by hand from the layout tables in `JetpackParameters`,
/// `JetpackRequest` and `JetpackAnswer` (and docs/android-jetpack.md): magic 0x4A, version 1,
/// kind, then little-endian fields. Not produced by the encoder under test.
enum JetpackOctets {
    /// A controller phone's parameters: 28 octets.
    static let controllerParameters: [UInt8] = [
        0x4A, 0x01, 0x01,  // 'J', version 1, parameters
        0xC4, 0xD3,  // the phone's UWB address (UwbAddress.address)
        0x78, 0x56, 0x34, 0x12,  // session id 0x12345678
        0x00, 0x00, 0x00, 0x00,  // sub-session id 0
        0x01,  // config type 1, CONFIG_UNICAST_DS_TWR
        0x09,  // channel 9
        0x0A,  // preamble index 10
        0x01,  // update rate 1, RANGING_UPDATE_RATE_AUTOMATIC
        0x02,  // slot duration 2 ms
        0x01,  // the phone is the controller
        0x08,  // session key length 8
        0x08, 0x07, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,  // vendor id and static STS IV
    ]

    /// A controlee phone's parameters leaving the complex channel to the rig (0 and 0), update
    /// rate 3 (RANGING_UPDATE_RATE_FREQUENT), 1 ms slots.
    static let controleeParameters: [UInt8] = [
        0x4A, 0x01, 0x01, 0xC4, 0xD3, 0x78, 0x56, 0x34, 0x12, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00,  // complex channel left to the rig
        0x03,  // update rate 3, RANGING_UPDATE_RATE_FREQUENT
        0x01,  // slot duration 1 ms
        0x00,  // the phone is a controlee
        0x08, 0x08, 0x07, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
    ]

    static let stop: [UInt8] = [0x4A, 0x01, 0x02]

    /// To the controller phone: the rig (A1 B2) is the controlee, on channel 9, preamble 10.
    static let acceptedAsControlee: [UInt8] = [0x4A, 0x01, 0x81, 0xA1, 0xB2, 0x00, 0x09, 0x0A]
    /// To the controlee phone: the rig is the controller, on channel 9 and preamble 9 (index
    /// 0x12345678 mod 4 = 0 of the board's 9, 10, 11, 12).
    static let acceptedAsController: [UInt8] = [0x4A, 0x01, 0x81, 0xA1, 0xB2, 0x01, 0x09, 0x09]

    static func stopped(_ reason: UInt8) -> [UInt8] { [0x4A, 0x01, 0x82, reason] }
    static func refused(_ reason: UInt8) -> [UInt8] { [0x4A, 0x01, 0x83, reason] }

    /// `controllerParameters` with the octet at `offset` replaced.
    static func controller(_ offset: Int, _ octet: UInt8) -> [UInt8] {
        var octets = controllerParameters
        octets[offset] = octet
        return octets
    }

    /// The parameters `controllerParameters` holds.
    static let controller = JetpackParameters(
        address: [0xC4, 0xD3], sessionID: 0x1234_5678, subSessionID: 0, configType: 1, channel: 9, preambleIndex: 10,
        updateRate: .automatic, slotDurationMilliseconds: 2, role: .controller, sessionKey: [0x08, 0x07, 1, 2, 3, 4, 5, 6])

    /// Every seed message, for the truncation and mutation loops.
    static let all: [[UInt8]] = [
        controllerParameters, controleeParameters, stop, acceptedAsControlee, acceptedAsController, stopped(0x00), refused(0x0B),
    ]
}
