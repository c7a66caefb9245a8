import ByteCoding

/// What a phone app using Jetpack's `androidx.core.uwb` tells the rig so that both sides can build
/// matching `RangingParameters`: the fields `RangingParameters` needs, in a fixed octet layout
/// this project defines (Jetpack leaves the out-of-band exchange to the app; docs/android-jetpack.md
/// has the whole exchange and a Kotlin sketch). The whole `JetpackRequest.parameters` message,
/// numbers little-endian:
///
/// | offset | size | field | Jetpack source |
/// |---|---|---|---|
/// | 0 | 1 | magic 0x4A ('J') | — |
/// | 1 | 1 | layout version 1 | — |
/// | 2 | 1 | kind 0x01: parameters | — |
/// | 3 | 2 | the phone's UWB short address, wire order | `localAddress.address` |
/// | 5 | 4 | session id, nonzero | `sessionId` |
/// | 9 | 4 | sub-session id, 0 | `subSessionId` |
/// | 13 | 1 | config type, 1 | `uwbConfigType` (`CONFIG_UNICAST_DS_TWR`) |
/// | 14 | 1 | channel | `uwbComplexChannel.channel` |
/// | 15 | 1 | preamble index | `uwbComplexChannel.preambleIndex` |
/// | 16 | 1 | update rate: 1 automatic, 2 infrequent, 3 frequent | `updateRateType` |
/// | 17 | 1 | slot duration, ms: 1 or 2 | `slotDurationMillis` |
/// | 18 | 1 | the phone's role: 0 controlee, 1 controller | which session scope it made |
/// | 19 | 1 | session key length k, 8 | `sessionKeyInfo.size` |
/// | 20 | k | session key: vendor id (2), static STS IV (6) | `sessionKeyInfo` |
///
/// 28 octets with a static STS key. A controller phone sends its scope's complex channel; a
/// controlee phone may send 0 and 0 to leave the choice to the rig (the answer names it), or a
/// complex channel the board must have.
///
/// Parsing checks the layout only: exact length, the enumerated octets (update rate, role).
/// Whether the values can run (session id 0, a sub-session, a config type, channel, preamble or key
/// the board lacks) is `configuration(for:)`'s question, so what parses always re-encodes to the
/// same octets.
package struct JetpackParameters: Equatable, Sendable {
    /// The phone's short address as `UwbAddress.address` holds it, in wire order.
    package var address: [UInt8]
    package var sessionID: UInt32
    package var subSessionID: UInt32
    package var configType: UInt8
    package var channel: UInt8
    package var preambleIndex: UInt8
    package var updateRate: JetpackUpdateRate
    package var slotDurationMilliseconds: UInt8
    /// The phone's role; the rig takes the other.
    package var role: JetpackRole
    package var sessionKey: [UInt8]

    /// The octets after the 3-octet header without the key: 17.
    package static let fixedBodySize = 17
    /// Jetpack carries no country code; the UWB configuration's is informational (the board's
    /// region is the rig's own configuration), so it is left as two zero octets.
    package static let noCountryCode: [UInt8] = [0, 0]

    package init(
        address: [UInt8], sessionID: UInt32, subSessionID: UInt32 = 0, configType: UInt8 = AndroidBoardCapabilities.unicastDSTWR,
        channel: UInt8, preambleIndex: UInt8, updateRate: JetpackUpdateRate, slotDurationMilliseconds: UInt8, role: JetpackRole,
        sessionKey: [UInt8]
    ) {
        precondition(address.count == 2, "a UWB short address is 2 octets")
        precondition(sessionKey.count <= 255, "the key length is one octet")
        self.address = address
        self.sessionID = sessionID
        self.subSessionID = subSessionID
        self.configType = configType
        self.channel = channel
        self.preambleIndex = preambleIndex
        self.updateRate = updateRate
        self.slotDurationMilliseconds = slotDurationMilliseconds
        self.role = role
        self.sessionKey = sessionKey
    }

    /// Reads the body after the header; the caller checks that nothing follows.
    init(reading reader: inout LittleEndianReader<JetpackMessageError>) throws(JetpackMessageError) {
        address = try reader.bytes(2, "UWB address")
        sessionID = try reader.u32("session id")
        subSessionID = try reader.u32("sub-session id")
        configType = try reader.u8("config type")
        channel = try reader.u8("channel")
        preambleIndex = try reader.u8("preamble index")
        let rateOctet = try reader.u8("update rate")
        guard let updateRate = JetpackUpdateRate(rawValue: rateOctet) else { throw .invalidValue(field: "update rate", value: rateOctet) }
        self.updateRate = updateRate
        slotDurationMilliseconds = try reader.u8("slot duration")
        let roleOctet = try reader.u8("role")
        guard let role = JetpackRole(rawValue: roleOctet) else { throw .invalidValue(field: "role", value: roleOctet) }
        self.role = role
        let keyLength = Int(try reader.u8("session key length"))
        sessionKey = try reader.bytes(keyLength, "session key")
    }

    var body: [UInt8] {
        var octets = address
        octets.appendLE(sessionID)
        octets.appendLE(subSessionID)
        octets += [configType, channel, preambleIndex, updateRate.rawValue, slotDurationMilliseconds, role.rawValue]
        octets.append(UInt8(sessionKey.count))
        return octets + sessionKey
    }

    /// True when a controlee phone leaves the complex channel to the rig (0 and 0).
    package var leavesComplexChannelToRig: Bool { role == .controlee && channel == 0 && preambleIndex == 0 }

    /// The complex channel the session uses on `board`: the phone's, or, when the phone leaves it
    /// to the rig, channel 9 (mandatory in FiRa, and the one AOSP's Jetpack controller always
    /// picks) if the board has it, else its first; the preamble index picked by the session id
    /// among the board's, so one rig's successive sessions spread over the BPRF codes without a
    /// random source in the machine.
    package func complexChannel(on board: AndroidBoardCapabilities) -> (channel: UInt8, preambleIndex: UInt8) {
        guard leavesComplexChannelToRig else { return (channel, preambleIndex) }
        let channel = board.channels.contains(9) ? 9 : board.channels.first ?? 0
        let preambles = board.preambleIndexes
        let preamble = preambles.isEmpty ? 0 : preambles[Int(sessionID % UInt32(preambles.count))]
        return (channel, preamble)
    }

    /// The session the rig runs for these parameters, as the OOB path's UWB configuration (so it
    /// maps to the same UCI TLVs through `AndroidSessionConfiguration`), checked against `board`
    /// with the check a Ranging Configuration passes. The rig's side is the complement of the
    /// phone's: controlee and responder for a controller phone, controller and initiator for a
    /// controlee phone. The interval is Android's preset for the update rate (`JetpackUpdateRate`).
    package func configuration(for board: AndroidBoardCapabilities) throws(JetpackParametersError) -> UWBConfiguration {
        guard subSessionID == 0 else { throw .subSessionID(subSessionID) }
        // Jetpack numbers its config types as androidx_backend does (3 is an AoA-less static
        // one there, 3 a provisioned one in the OOB spec's numbering): only 1 means the same.
        guard configType == AndroidBoardCapabilities.unicastDSTWR else {
            throw .configuration(.unsupportedConfigID(configType, supported: [AndroidBoardCapabilities.unicastDSTWR]))
        }
        guard let interval = updateRate.intervalMilliseconds(configID: configType) else {
            throw .configuration(.unsupportedConfigID(configType, supported: board.configIDs))
        }
        // UWBConfiguration's own layout bounds its key; a key that long is refused either way.
        guard sessionKey.count <= 255 - 2 - UWBConfiguration.fixedBodySize else {
            throw .configuration(.sessionKeyLength(sessionKey.count, supported: board.sessionKeyLengths))
        }
        let (channel, preambleIndex) = complexChannel(on: board)
        let rig = role.peer
        let configuration = UWBConfiguration(
            address: address, sessionID: sessionID, configID: configType, channel: channel, preambleIndex: preambleIndex,
            intervalMilliseconds: interval, slotDurationMilliseconds: slotDurationMilliseconds, sessionKey: sessionKey,
            countryCode: Self.noCountryCode, role: rig.rangingRole, mode: rig.mode)
        do {
            try board.validate(configuration)
        } catch {
            throw .configuration(error)
        }
        return configuration
    }
}
