import Testing

@testable import AndroidRangingOOB

/// Each way a message can be malformed gets its own error, and its description names the value.
@Suite struct OOBMessageRefusalTests {
    @Test func headerRefusals() {
        #expect(throws: OOBMessageError.truncated(context: "OOB message", field: "version", needed: 1, available: 0)) { try OOBMessage([]) }
        #expect(throws: OOBMessageError.truncated(context: "OOB message", field: "message id", needed: 1, available: 0)) {
            try OOBMessage([0x01])
        }
        #expect(throws: OOBMessageError.unsupportedVersion(0)) { try OOBMessage([0x00, 0x00, 0x01, 0x00]) }
        #expect(throws: OOBMessageError.unsupportedVersion(4)) { try OOBMessage([0x04, 0x00, 0x01, 0x00]) }
        for id: UInt8 in [0x04, 0x05, 0x09, 0xFF] {
            #expect(throws: OOBMessageError.unknownMessageID(id)) { try OOBMessage([0x01, id, 0x01, 0x00]) }
        }
        #expect(throws: OOBMessageError.notInVersion(.motionNotification, .v2)) { try OOBMessage([0x02, 0x08, 0x00]) }
    }

    /// Older AOSP sources put the message id first and numbered stop 4: such a stop is refused.
    @Test func theOlderAOSPHeaderOrderIsRefused() {
        #expect(throws: OOBMessageError.unknownMessageID(0x04)) { try OOBMessage([0x01, 0x04]) }
        #expect(throws: OOBMessageError.unsupportedVersion(0)) { try OOBMessage([0x00, 0x01]) }
    }

    @Test func bitmapRefusals() {
        let context = "Ranging Capability Request (0x0)"
        #expect(throws: OOBMessageError.truncated(context: context, field: "requested technologies", needed: 2, available: 1)) {
            try OOBMessage([0x01, 0x00, 0x01])
        }
        #expect(throws: OOBMessageError.reservedBits(field: "requested technologies", value: 0x0010)) { try OOBMessage([0x01, 0x00, 0x10, 0x00]) }
        #expect(throws: OOBMessageError.reservedBits(field: "technologies to stop", value: 0x8001)) { try OOBMessage([0x01, 0x06, 0x01, 0x80]) }
        #expect(throws: OOBMessageError.trailingOctets(.capabilityRequest, count: 1)) { try OOBMessage([0x01, 0x00, 0x01, 0x00, 0x00]) }
        #expect(throws: OOBMessageError.trailingOctets(.stopRangingResponse, count: 2)) { try OOBMessage([0x01, 0x07, 0x01, 0x00, 0, 0]) }
    }

    @Test func blockRefusals() {
        // A UWB block whose size octet says 19 (one short of the layout), the message cut to match.
        var short = Octets.capabilityResponseV1
        short[5] = 0x13
        short.removeLast()
        #expect(throws: OOBMessageError.blockSizeMismatch(.uwb, size: 19, expected: 20)) { try OOBMessage(short) }
        // A size octet below the header's own two octets.
        #expect(throws: OOBMessageError.blockSizeMismatch(.bleRSSI, size: 1, expected: 2)) {
            try OOBMessage([0x01, 0x01, 0x08, 0x00, 0x03, 0x01])
        }
        // A block running past the message's end.
        #expect(throws: OOBMessageError.truncated(context: "Ranging Capability Response (0x1)", field: "UWB block", needed: 18, available: 17)) {
            try OOBMessage(Octets.capabilityResponseV1.dropLast())
        }
        // One octet left where a block header needs two.
        #expect(throws: OOBMessageError.truncated(context: "Ranging Capability Response (0x1)", field: "technology block header", needed: 2, available: 1)) {
            try OOBMessage(Octets.capabilityResponseV1 + [0x03])
        }
        #expect(throws: OOBMessageError.unknownTechnology(0x04)) { try OOBMessage([0x01, 0x01, 0x01, 0x00, 0x04, 0x02]) }
        let rssi: [UInt8] = [0x03, 0x08, 1, 2, 3, 4, 5, 6]
        #expect(throws: OOBMessageError.duplicateTechnology(.bleRSSI)) { try OOBMessage([0x01, 0x01, 0x08, 0x00] + rssi + rssi) }
        #expect(throws: OOBMessageError.blocksDisagreeWithBitmap(bitmap: [.uwb, .bleRSSI], blocks: .uwb)) {
            try OOBMessage([0x01, 0x01, 0x09, 0x00] + Octets.uwbCapabilityBlock)
        }
        #expect(throws: OOBMessageError.blocksDisagreeWithBitmap(bitmap: .uwb, blocks: [])) { try OOBMessage([0x01, 0x01, 0x01, 0x00]) }
        var roles = Octets.capabilityResponseV1
        roles[23] = 0x07
        #expect(throws: OOBMessageError.reservedBits(field: "UWB roles", value: 0x07)) { try OOBMessage(roles) }
    }

    @Test func versionTrailerRefusals() {
        // Version 2 needs the transitioning and device type octets after the blocks: without
        // them, the last block eats into them and comes up short.
        let v2WithoutTrailer = [0x02] + Octets.capabilityResponseV1.dropFirst()
        #expect(throws: OOBMessageError.truncated(context: "Ranging Capability Response (0x1)", field: "UWB block", needed: 18, available: 15)) {
            try OOBMessage(v2WithoutTrailer)
        }
        var transitioning = Octets.capabilityResponseV2
        transitioning[32] = 0x02
        #expect(throws: OOBMessageError.invalidValue(field: "technology transitioning", value: 2)) { try OOBMessage(transitioning) }
        var motion = Octets.configurationV3
        motion[motion.count - 1] = 0x02
        #expect(throws: OOBMessageError.invalidValue(field: "motion support", value: 2)) { try OOBMessage(motion) }
        #expect(throws: OOBMessageError.invalidValue(field: "motion", value: 4)) { try OOBMessage([0x03, 0x08, 0x04]) }
        // A version 1 configuration with version 3's motion octet has one octet too many.
        #expect(throws: OOBMessageError.truncated(context: "Ranging Configuration (0x2)", field: "technology block header", needed: 2, available: 1)) {
            try OOBMessage(Octets.configurationV1 + [0x01])
        }
    }

    @Test func configurationRefusals() {
        let base = Octets.configurationV1
        var role = base
        role[base.count - 2] = 0x03
        #expect(throws: OOBMessageError.invalidValue(field: "UWB device role", value: 3)) { try OOBMessage(role) }
        var mode = base
        mode[base.count - 1] = 0x00
        #expect(throws: OOBMessageError.invalidValue(field: "UWB device mode", value: 0)) { try OOBMessage(mode) }
        // A key length of 9 in a block sized for 8: the key takes the country code's first
        // octet and the device mode has nothing left.
        var key = base
        key[20] = 9
        #expect(throws: OOBMessageError.truncated(context: "UWB configuration", field: "device mode", needed: 1, available: 0)) { try OOBMessage(key) }
        // A block one octet longer than its key length accounts for.
        var long = base
        long[7] = 0x1C
        long.append(0x00)
        #expect(throws: OOBMessageError.blockSizeMismatch(.uwb, size: 28, expected: 27)) { try OOBMessage(long) }
        var starts = base
        starts[4] = 0x09
        #expect(throws: OOBMessageError.startsUnconfigured(.bleRSSI)) { try OOBMessage(starts) }
        #expect(throws: OOBMessageError.truncated(context: "Ranging Configuration (0x2)", field: "technologies to start", needed: 2, available: 0)) {
            try OOBMessage([0x01, 0x02, 0x01, 0x00])
        }
    }

    @Test func errorsReadAsOneSentenceNamingTheValue() {
        let errors: [(OOBMessageError, String)] = [
            (.truncated(context: "OOB message", field: "version", needed: 1, available: 0), "version"),
            (.unsupportedVersion(9), "version 9"),
            (.unknownMessageID(0x04), "0x4"),
            (.notInVersion(.motionNotification, .v1), "Motion Notification (0x8)"),
            (.reservedBits(field: "technologies to stop", value: 0x40), "0x40"),
            (.unknownTechnology(0x04), "0x4"),
            (.blockSizeMismatch(.uwb, size: 19, expected: 20), "19"),
            (.duplicateTechnology(.bleRSSI), "BLE RSSI"),
            (.blocksDisagreeWithBitmap(bitmap: [.uwb, .bleRSSI], blocks: .uwb), "{UWB, BLE RSSI}"),
            (.startsUnconfigured(.wifiPD), "Wi-Fi PD"),
            (.invalidValue(field: "UWB device role", value: 3), "role octet 3"),
            (.trailingOctets(.stopRanging, count: 2), "Stop Ranging (0x6)"),
        ]
        for (error, named) in errors {
            #expect(error.description.contains(named), "\(error.description)")
            #expect(error.description.hasSuffix("."))
        }
        #expect(Set(errors.map(\.0.description)).count == errors.count)
    }
}
