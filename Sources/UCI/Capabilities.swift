import ByteCoding

/// Reading what CORE_GET_CAPS_INFO reports.
package enum Capabilities {
    /// The FiRa capability parameters, whose TLV types UCI 2.0 renumbered: 1.x starts at the PHY
    /// version range (0x00) and ends with the sizes (0x12, 0x13); 2.0 puts the sizes first
    /// (0x00, 0x01), adds device types (0x04), suspend ranging (0x15) and session key lengths
    /// (0x16). Sources: AOSP's `CapabilityParam` (`..._VER_1_0` / `..._VER_2_0`) and Qorvo's
    /// `uci_device_capability_parameters` (firmware-notes/uci-config.md).
    package enum Field: CaseIterable, Sendable {
        case maxMessageSize, maxDataPacketPayloadSize, phyVersionRange, macVersionRange, deviceTypes, deviceRoles
        case rangingMethods, stsConfigs, multiNodeModes, rangingTimeStructs, scheduleModes, hoppingMode, blockStriding
        case uwbInitiationTime, channels, rframeConfigs, ccConstraintLengths, bprfParameterSets, hprfParameterSets, aoa
        case extendedMACAddress, suspendRanging, sessionKeyLengths

        /// The TLV type on a board whose UCI major version is `uciMajor`; nil where that
        /// generation has no such capability.
        package func type(uciMajor: UInt8) -> UInt8? {
            let version2: [Field] = [
                .maxMessageSize, .maxDataPacketPayloadSize, .phyVersionRange, .macVersionRange, .deviceTypes, .deviceRoles,
                .rangingMethods, .stsConfigs, .multiNodeModes, .rangingTimeStructs, .scheduleModes, .hoppingMode, .blockStriding,
                .uwbInitiationTime, .channels, .rframeConfigs, .ccConstraintLengths, .bprfParameterSets, .hprfParameterSets, .aoa,
                .extendedMACAddress, .suspendRanging, .sessionKeyLengths,
            ]
            let version1: [Field] = [
                .phyVersionRange, .macVersionRange, .deviceRoles, .rangingMethods, .stsConfigs, .multiNodeModes,
                .rangingTimeStructs, .scheduleModes, .hoppingMode, .blockStriding, .uwbInitiationTime, .channels, .rframeConfigs,
                .ccConstraintLengths, .bprfParameterSets, .hprfParameterSets, .aoa, .extendedMACAddress, .maxMessageSize,
                .maxDataPacketPayloadSize,
            ]
            return (uciMajor >= 2 ? version2 : version1).firstIndex(of: self).map(UInt8.init)
        }
    }

    /// The value of `field` in `tlvs` from a board of UCI major version `uciMajor` (nil when
    /// the board does not report it).
    package static func value(of field: Field, in tlvs: [CapabilityTLV], uciMajor: UInt8) -> [UInt8]? {
        guard let type = field.type(uciMajor: uciMajor) else { return nil }
        return tlvs.first { $0.type == type }?.value
    }

    /// Bits of SUPPORTED_CHANNELS, lowest first: channel 5, 6, 8, 9, 10, 12, 13, 14.
    package static let channelBits: [UInt8] = [5, 6, 8, 9, 10, 12, 13, 14]

    /// `SUPPORTED_MAX_RANGING_SESSION_NUMBER`: how many ranging sessions the UWBS runs at once.
    /// 0xE9 is in the range FiRa leaves to vendors; Android's UWB stack defines it (AOSP
    /// `CapTlvType`), as a little-endian integer.
    package static let maxRangingSessionsType: UInt8 = 0xE9
    /// `SUPPORTED_RSSI_REPORTING` (Android's vendor range too): 1 when RSSI_REPORTING works.
    package static let rssiReportingType: UInt8 = 0xE6

    /// The UWBS's ranging-session limit, if it reports one (1 to 4 value bytes, little-endian).
    package static func maxRangingSessions(in tlvs: [CapabilityTLV]) -> Int? {
        guard let tlv = tlvs.first(where: { $0.type == maxRangingSessionsType }), (1...4).contains(tlv.value.count) else {
            return nil
        }
        let count = tlv.value.reversed().reduce(0) { $0 << 8 | Int($1) }
        return count > 0 ? count : nil
    }
}
