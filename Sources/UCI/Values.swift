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

/// The body of a CORE_GET_DEVICE_INFO_RSP after its status.
package struct DeviceInfo: Hashable, Sendable {
    package var uciVersion: UCIVersion
    package var macVersion: UCIVersion
    package var phyVersion: UCIVersion
    package var uciTestVersion: UCIVersion
    /// Vendor-specific octets (at most 255).
    package var vendorData: [UInt8]

    package init(
        uciVersion: UCIVersion, macVersion: UCIVersion, phyVersion: UCIVersion,
        uciTestVersion: UCIVersion, vendorData: [UInt8]
    ) {
        self.uciVersion = uciVersion
        self.macVersion = macVersion
        self.phyVersion = phyVersion
        self.uciTestVersion = uciTestVersion
        self.vendorData = vendorData
    }

    /// The vendor data as lowercase hex, two digits per octet.
    package var vendorDataHex: String {
        vendorData.hexString
    }

    /// The name a board's calibration is filed under: its USB serial number when it has one, else
    /// "vendor:" and its vendor data in hex (a virtual board's carries its number). Stable across
    /// replugs and ports; the `board` of the `device` event and the key `doctor` looks up.
    package func boardKey(serial: String?) -> String {
        serial ?? "vendor:" + vendorDataHex
    }
}

/// One CORE_GET_CAPS_INFO_RSP TLV. The type stays raw: 1.x and 2.0 number them differently.
package struct CapabilityTLV: Hashable, Sendable {
    package var type: UInt8
    package var value: [UInt8]

    package init(type: UInt8, value: [UInt8]) {
        self.type = type
        self.value = value
    }
}

/// A UWB MAC address: 2 octets (short) or 8 octets (extended), little-endian on the wire.
package enum MacAddress: Hashable, Sendable, CustomStringConvertible {
    case short(UInt16)
    case extended(UInt64)

    /// Wire octets, least significant first.
    var octets: [UInt8] {
        switch self {
        case .short(let value): value.littleEndianBytes
        case .extended(let value): value.littleEndianBytes
        }
    }

    init(shortOctets octets: [UInt8]) {
        self = .short(UInt16(octets[0]) | UInt16(octets[1]) << 8)
    }

    init(extendedOctets octets: [UInt8]) {
        self = .extended(octets.reversed().reduce(0) { $0 << 8 | UInt64($1) })
    }

    /// Hex of the wire octets in wire order, "5F:DD": the form Android and pica print.
    package var description: String {
        octets.map { hex($0).dropFirst(2) }.joined(separator: ":")
    }
}

/// MAC_ADDRESS_MODE app config values; modes 1 and 2 both use 8-octet addresses in UCI.
package enum MacAddressMode: UInt8, Sendable {
    case short = 0, extendedWithShortHeader = 1, extended = 2

    var addressSize: Int { self == .short ? 2 : 8 }
}

/// SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_CMD action.
package enum MulticastAction: UInt8, Sendable {
    case add = 0, remove = 1, addWith16ByteSubSessionKey = 2, addWith32ByteSubSessionKey = 3

    /// Octets of sub-session key each controlee entry carries for this action.
    var keySize: Int {
        switch self {
        case .add, .remove: 0
        case .addWith16ByteSubSessionKey: 16
        case .addWith32ByteSubSessionKey: 32
        }
    }
}

/// One controlee entry of SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_CMD.
package struct Controlee: Hashable, Sendable {
    package var shortAddress: UInt16
    package var subSessionID: UInt32
    /// Empty for add/remove; 16 or 32 octets for the keyed add actions.
    package var subSessionKey: [UInt8]

    package init(shortAddress: UInt16, subSessionID: UInt32, subSessionKey: [UInt8] = []) {
        self.shortAddress = shortAddress
        self.subSessionID = subSessionID
        self.subSessionKey = subSessionKey
    }
}

/// One controlee's result of a multicast list update: in the UCI 2.0 response and in the
/// notification (whose 1.x layout also names the sub-session).
package struct ControleeStatus: Hashable, Sendable {
    package var shortAddress: UInt16
    /// Only in the UCI 1.x notification layout.
    package var subSessionID: UInt32?
    /// A `MulticastUpdateStatus` value.
    package var status: UInt8

    package init(shortAddress: UInt16, subSessionID: UInt32? = nil, status: UInt8) {
        self.shortAddress = shortAddress
        self.subSessionID = subSessionID
        self.status = status
    }
}

/// Multicast list update statuses: a table of their own, not `StatusCode` (uci.md §1.8).
package enum MulticastUpdateStatus {
    package static let ok: UInt8 = 0x00
    package static let listFull: UInt8 = 0x01
    package static let keyFetchFailed: UInt8 = 0x02
    package static let subSessionIDNotFound: UInt8 = 0x03
    package static let addressNotFound: UInt8 = 0x07
    package static let addressAlreadyPresent: UInt8 = 0x08
}

/// SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_NTF: what became of each controlee of an update.
///
/// Two layouts: UCI 2.0 `token, n, [address(2), status]`; UCI 1.x `token, remaining list
/// size, n, [address(2), sub-session id(4), status]`. The decoder tells them apart by which one
/// the payload length fits (2.0 first); `remainingListSize` is set exactly for the 1.x layout.
package struct MulticastListUpdate: Hashable, Sendable {
    package var session: UInt32
    package var remainingListSize: UInt8?
    package var controlees: [ControleeStatus]

    package init(session: UInt32, remainingListSize: UInt8? = nil, controlees: [ControleeStatus]) {
        self.session = session
        self.remainingListSize = remainingListSize
        self.controlees = controlees
    }

    init(payload: [UInt8]) throws(UCIError) {
        let name = "SESSION_UPDATE_CONTROLLER_MULTICAST_LIST_NTF"
        var r = ByteReader(payload, context: name)
        session = try r.u32("session_token")
        let fitsVersion2 = payload.count >= 5 && payload.count == 5 + 3 * Int(payload[4])
        if !fitsVersion2 { remainingListSize = try r.u8("remaining_multicast_list_size") } else { remainingListSize = nil }
        let count = Int(try r.u8("controlee count"))
        let stride = fitsVersion2 ? 3 : 7
        try r.expectRest(count: count, stride: stride, field: "controlee statuses")
        controlees = []
        for _ in 0..<count {
            let address = try r.u16("mac_address")
            let subSession: UInt32? = fitsVersion2 ? nil : try r.u32("subsession_id")
            controlees.append(ControleeStatus(shortAddress: address, subSessionID: subSession, status: try r.u8("status")))
        }
    }

    var payload: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLE(session)
        if let remainingListSize { bytes.append(remainingListSize) }
        bytes.append(count: controlees.count, of: "controlee status list")
        for controlee in controlees {
            bytes.appendLE(controlee.shortAddress)
            if remainingListSize != nil { bytes.appendLE(controlee.subSessionID ?? 0) }
            bytes.append(controlee.status)
        }
        return bytes
    }
}

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
