import BLE

/// What a peer advertises, in the manufacturer-specific AD structure of a legacy advertisement.
///
/// Layout (all little-endian), inside AD type 0xFF after the 2-byte company id 0xFFFF (the id
/// the Bluetooth SIG reserves for tests; a registered id replaces it before shipping):
///
/// | off | size | field |
/// |---|---|---|
/// | 0 | 2 | magic "NB" |
/// | 2 | 1 | payload version (1) |
/// | 3 | 2 | group |
/// | 5 | 8 | peer id |
/// | 13 | 2 | UWB short address |
/// | 15 | 1 | capabilities (bit 0 UWB, bit 1 AoA, bit 2 one-to-many controlee) |
/// | 16 | 1 | L2CAP PSM of the peer channel |
///
/// With the Flags AD this is 3 + 4 + 17 = 24 of the 31 legacy bytes; the name goes in the scan
/// response. Ranging secrets (session id, STS values) are never advertised: they travel over the
/// peer channel only.
package struct Advertisement: Sendable, Equatable {
    package static let companyID: UInt16 = 0xFFFF
    package static let magic: [UInt8] = Array("NB".utf8)
    package static let version: UInt8 = 1

    package struct Capabilities: OptionSet, Sendable, Equatable {
        package var rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let uwb = Capabilities(rawValue: 1 << 0)
        package static let angleOfArrival = Capabilities(rawValue: 1 << 1)
        /// Can range as a controlee in a one-to-many session. A controller puts only peers that
        /// advertise it into one (builds before this bit existed would reject the parameters).
        package static let oneToMany = Capabilities(rawValue: 1 << 2)
        /// Its board runs provisioned STS with a session key (FiRa STS_CONFIG 3); set only in
        /// the private advert, where the key that session key derives from exists.
        package static let provisionedSTS = Capabilities(rawValue: 1 << 3)
        /// Sent only from resolvable private addresses made with the rig's identity resolving
        /// key (`KeySchedule.identityResolvingKey`); set only in the private advert, whose MAC
        /// keeps anyone without the key from setting or clearing it. A rig drops an advert with
        /// this bit from an address that does not resolve: a replay from someone else's radio.
        package static let addressBound = Capabilities(rawValue: 1 << 4)
        /// Its board does FiRa round hopping (HOPPING_MODE 1); set only in the private advert,
        /// since only a v2 link's `hello` can ask for it.
        package static let roundHopping = Capabilities(rawValue: 1 << 5)
    }

    package var group: UInt16
    package var peerID: PeerID
    package var uwbShortAddress: UInt16
    package var capabilities: Capabilities
    package var psm: UInt8

    package init(group: UInt16, peerID: PeerID, uwbShortAddress: UInt16, capabilities: Capabilities, psm: UInt8) {
        self.group = group
        self.peerID = peerID
        self.uwbShortAddress = uwbShortAddress
        self.capabilities = capabilities
        self.psm = psm
    }

    /// Complete advertising data: Flags (LE General Discoverable, BR/EDR not supported) + our AD.
    package func advertisingData() -> [UInt8] {
        var ad: [UInt8] = [0x02, 0x01, 0x06]
        var body: [UInt8] = [0xFF]
        body.appendLE(Self.companyID)
        body += Self.magic
        body.append(Self.version)
        body.appendLE(group)
        body.appendLE(peerID.rawValue)
        body.appendLE(uwbShortAddress)
        body.append(capabilities.rawValue)
        body.append(psm)
        ad.append(UInt8(body.count))
        ad += body
        return ad
    }

    /// Finds our payload among the AD structures of any advertisement.
    ///
    /// Returns nil, cheaply, for foreign adverts and for other payload versions (a newer peer is
    /// ignored rather than misread). Throws only when our magic is present but the structure is broken.
    package static func find(in advertisingData: [UInt8]) throws(PeerProtocolError) -> Advertisement? {
        for structure in AdvertisingData(advertisingData) where structure.type == AdvertisingData.manufacturerSpecific {
            let data = structure.data
            guard data.count >= 5, data[data.startIndex] == UInt8(companyID & 0xFF), data[data.startIndex + 1] == UInt8(companyID >> 8),
                data[(data.startIndex + 2)..<(data.startIndex + 4)].elementsEqual(magic)
            else { continue }
            return try decodeBody(data.dropFirst(4))
        }
        return nil
    }

    private static func decodeBody(_ body: ArraySlice<UInt8>) throws(PeerProtocolError) -> Advertisement? {
        var reader = ByteReader(body, context: "advertisement")
        let version = try reader.u8("version")
        guard version == Self.version else { return nil }
        let advert = Advertisement(
            group: try reader.uint(UInt16.self, "group"),
            peerID: PeerID(try reader.uint(UInt64.self, "peer_id")),
            uwbShortAddress: try reader.uint(UInt16.self, "uwb_short_address"),
            capabilities: Capabilities(rawValue: try reader.u8("capabilities")),
            psm: try reader.u8("psm"))
        try reader.expectEnd()
        return advert
    }
}
