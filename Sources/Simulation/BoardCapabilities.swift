import UCI

/// What a virtual board answers to CORE_GET_CAPS_INFO: the capability set of a DW3000-class board
/// with one antenna (DWM3001CDK), in the numbering of the UCI generation it speaks. Every value is
/// what the board really does (firmware-notes/uci-config.md lists each with its encoding and
/// sources), so a host that believes it asks only for what works.
enum BoardCapabilities {
    static func dw3000(_ uci: BoardUCI, maxSessions: Int) -> [CapabilityTLV] {
        let major: UInt8 = uci == .v1_1 ? 1 : 2
        // (field, value): little-endian integers, bitmasks lowest bit first (AOSP CapabilityParam).
        let values: [(Capabilities.Field, [UInt8])] = [
            // 255 octets: one UCI packet, no segmentation needed; a data packet fits in one message.
            (.maxMessageSize, [0xFF, 0x00]),
            (.maxDataPacketPayloadSize, [0xFF, 0x00]),
            // FiRa PHY and MAC versions supported: min major, min minor, max major, max minor.
            (.phyVersionRange, uci == .v1_1 ? [1, 0, 1, 1] : [1, 1, 1, 3]),
            (.macVersionRange, uci == .v1_1 ? [1, 0, 1, 1] : [1, 1, 1, 3]),
            (.deviceTypes, [0x03]),  // controlee and controller
            // responder, initiator (2.0: a second octet for DT-Tag, not supported)
            (.deviceRoles, uci == .v1_1 ? [0x03] : [0x03, 0x00]),
            // SS-TWR and DS-TWR, deferred and non-deferred (2.0: a second octet for aDS-TWR)
            (.rangingMethods, uci == .v1_1 ? [0x1E] : [0x1E, 0x00]),
            // static STS; 2.0 also provisioned STS (SESSION_KEY exists only there)
            (.stsConfigs, uci == .v1_1 ? [0x01] : [0x09]),
            (.multiNodeModes, [0x03]),  // unicast, one-to-many
            (.rangingTimeStructs, [0x02]),  // block-based scheduling
            (.scheduleModes, [0x02]),  // time-scheduled ranging
            (.hoppingMode, [0x01]),  // FiRa round hopping (a Pixel needed HOPPING_MODE 1 of it)
            (.blockStriding, [0x00]),
            (.uwbInitiationTime, [0x01]),
            (.channels, [0x09]),  // channels 5 and 9: a DW3000's two
            (.rframeConfigs, [0x0B]),  // SP0, SP1, SP3
            (.ccConstraintLengths, [0x03]),  // K3, K7
            (.bprfParameterSets, [0x3F]),  // BPRF sets 1-6 (64 MHz PRF)
            (.hprfParameterSets, [0x00]),  // no HPRF: the DW3000 has no 124.8/249.6 MHz PRF
            (.aoa, [0x00]),  // one antenna: no angle of arrival
            (.extendedMACAddress, [0x01]),
            (.suspendRanging, [0x00]),
            (.sessionKeyLengths, [0x00]),  // 128-bit session keys only
        ]
        var tlvs = values.compactMap { field, value in field.type(uciMajor: major).map { CapabilityTLV(type: $0, value: value) } }
        // Android's vendor TLVs (AOSP UwbVendorCapabilityTlvTypes), which AOSP hosts and Qorvo's
        // firmware use: RSSI reporting (a 1.1 measurement has no RSSI octet) and the sessions
        // it runs at once (4 octets).
        tlvs.append(CapabilityTLV(type: Capabilities.rssiReportingType, value: [uci == .v1_1 ? 0 : 1]))
        tlvs.append(
            CapabilityTLV(
                type: Capabilities.maxRangingSessionsType,
                value: [UInt8(truncatingIfNeeded: maxSessions), UInt8(truncatingIfNeeded: maxSessions >> 8), 0, 0]))
        return tlvs
    }
}
