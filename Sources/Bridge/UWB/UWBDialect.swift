import PeerProtocol
import UCI
import UCIHost

/// What differs between firmwares that all speak FiRa UCI: how a board is brought up and which
/// SET_APP_CONFIG a session of ours needs on it. Everything else (the session life cycle, the
/// peer protocol, range notifications) is the same for every board. A new dialect is one type
/// conforming to this protocol and one case in `UWBDialectName`.
package protocol UWBDialect: Sendable {
    /// Resets a board that was just opened (or came back), sends it the vendor commands the
    /// dialect needs for `profile`, and reads what it says about itself.
    func bringUp(_ uwb: UCIHost, profile: UWBProfile) async throws(UCIHostError) -> BoardDescription
    /// SET_APP_CONFIG TLVs for one side of the session `parameters` describe, on `board` (nil
    /// before it answered its bring-up); a one-to-many controller starts with this controlee
    /// and adds the others to its multicast list.
    func appConfig(
        for parameters: PeerMessage.RangingParameters, asController: Bool, sts: SessionSTS, profile: UWBProfile,
        board: BoardDescription?
    ) -> [AppConfigTLV]
}

/// How a session's scrambled timestamp sequence is keyed.
package enum SessionSTS: Sendable, Equatable {
    /// Static STS from the parameters' vendor id and IV (random per session on v1, derived on v2).
    case fromParameters
    /// Provisioned STS (STS_CONFIG 3) with a SESSION_KEY both sides derived on a v2 link.
    case provisioned(sessionKey: [UInt8])
}

/// The dialects a config can name (`"uwbDialect"`).
package enum UWBDialectName: String, Sendable, CaseIterable, Codable {
    /// Qorvo's FiRa UCI firmware for the DW3000 family (QM33 SDK, DWM3001CDK): the reference board.
    case qorvo
    /// Plain FiRa UCI with Android's defaults, as Google's pica emulator and AOSP hosts drive it.
    case fira

    package var dialect: any UWBDialect {
        switch self {
        case .qorvo: QorvoDialect()
        case .fira: FiRaDialect()
        }
    }
}

/// What a board says about itself when it comes up.
package struct BoardDescription: Sendable, Equatable {
    package var info: DeviceInfo
    package var capabilities: [CapabilityTLV]
    /// The regulatory region the board took at bring-up (nil: none was asked for, or the board
    /// refused the command and keeps its own).
    package var countryCode: String?

    package init(info: DeviceInfo, capabilities: [CapabilityTLV], countryCode: String? = nil) {
        self.info = info
        self.capabilities = capabilities
        self.countryCode = countryCode
    }

    /// The UWB channels it supports (SUPPORTED_CHANNELS in its UCI generation's numbering). Nil
    /// when the board does not say.
    package var supportedChannels: [UInt8]? {
        guard let bits = capability(.channels)?.first else { return nil }
        return Capabilities.channelBits.enumerated().filter { bits & (1 << $0.offset) != 0 }.map(\.element)
    }

    /// Whether it runs provisioned STS keyed by SESSION_KEY: UCI 2.0 (1.x has no SESSION_KEY)
    /// and bit 3 (STS_CONFIG 3) of SUPPORTED_STS_CONFIG.
    package var supportsProvisionedSTS: Bool {
        guard info.uciVersion.major >= 2, let bits = capability(.stsConfigs)?.first else { return false }
        return bits & (1 << STSConfig.provisioned.rawValue) != 0
    }

    /// Whether its range notifications carry the received level: UCI 2.0 has an RSSI octet in
    /// each measurement (when RSSI_REPORTING asks for it); in 1.1 that octet is RFU.
    package var reportsRSSI: Bool { info.uciVersion.major >= 2 }

    /// Ranging sessions it runs at once, from its capabilities (nil if it does not say).
    package var maxRangingSessions: Int? { Capabilities.maxRangingSessions(in: capabilities) }

    /// What the peer protocol needs that the board's capabilities say it cannot do, one sentence
    /// each (empty when it can range with peers, or does not say): the peers' channel, their
    /// preamble code's PRF (codes 9-12 are BPRF, 25-32 HPRF: the board must list some parameter
    /// set of that PRF), DS-TWR deferred (RANGING_METHOD bit 2), unicast sessions
    /// (MULTI_NODE_MODES bit 0), static STS (STS_CONFIG bit 0: every peer without provisioned
    /// STS uses it), and both roles (DEVICE_ROLES bits 0 and 1: which side initiates depends on
    /// the peer ids).
    package func unmetNeeds(channel: UInt8, preambleCodeIndex: UInt8) -> [String] {
        var unmet: [String] = []
        if let channels = supportedChannels, !channels.contains(channel) {
            let list = channels.map(String.init).joined(separator: ",")
            unmet.append("the board does not support UWB channel \(channel), which the peers range on (it reports channels \(list))")
        }
        let prf: (Capabilities.Field, String)? = switch preambleCodeIndex {
        case 9...12: (.bprfParameterSets, "BPRF")
        case 25...32: (.hprfParameterSets, "HPRF")
        default: nil
        }
        if let (field, name) = prf, let sets = capability(field), !sets.contains(where: { $0 != 0 }) {
            unmet.append("the board does not support \(name), which preamble code \(preambleCodeIndex) the peers range with needs")
        }
        let needs: [(Capabilities.Field, UInt8, String)] = [
            (.rangingMethods, 1 << 2, "DS-TWR with deferred reports"), (.multiNodeModes, 1 << 0, "unicast sessions"),
            (.stsConfigs, 1 << 0, "static STS"), (.deviceRoles, 0x03, "both the initiator and the responder role"),
        ]
        for (field, bits, what) in needs {
            if let value = capability(field)?.first, value & bits != bits { unmet.append("the board does not support \(what), which the peers range with") }
        }
        return unmet
    }

    /// Whether it measures angles: SUPPORTED_AOA, any bit set. Nil when the board does not say.
    package var measuresAngles: Bool? {
        capability(.aoa).map { $0.contains { $0 != 0 } }
    }

    private func capability(_ field: Capabilities.Field) -> [UInt8]? {
        Capabilities.value(of: field, in: capabilities, uciMajor: info.uciVersion.major)
    }
}

extension UWBDialect {
    /// The FiRa bring-up, unless a dialect needs more: CORE_DEVICE_RESET, the country code if
    /// the profile names one (Android's vendor ANDROID_SET_COUNTRY_CODE, which AOSP hosts send,
    /// Qorvo's firmware and pica answer; a board that refuses it keeps its own region), then
    /// CORE_GET_DEVICE_INFO and CORE_GET_CAPS_INFO (boards that do not answer the last one get
    /// no capabilities).
    package func bringUp(_ uwb: UCIHost, profile: UWBProfile) async throws(UCIHostError) -> BoardDescription {
        try await uwb.reset()
        var countryCode: String?
        if let code = profile.countryCode {
            do {
                try await uwb.setCountryCode(code)
                countryCode = code
            } catch .commandFailed {
                countryCode = nil
            }
        }
        let info = try await uwb.deviceInfo()
        return BoardDescription(info: info, capabilities: (try? await uwb.capabilities()) ?? [], countryCode: countryCode)
    }

    /// The TLVs both dialects send alike: roles, DS-TWR deferred, STS (static with the values
    /// agreed out of band, or provisioned with the derived session key), addresses, channel and
    /// timing (firmware-notes/uci-config.md).
    func sessionTLVs(
        for parameters: PeerMessage.RangingParameters, asController: Bool, sts: SessionSTS, profile: UWBProfile
    ) -> [AppConfigTLV] {
        let own = asController ? parameters.controllerAddress : parameters.controleeAddress
        let peer = asController ? parameters.controleeAddress : parameters.controllerAddress
        return [
            .deviceType(asController ? .controller : .controlee),
            .deviceRole(asController ? .initiator : .responder),
            .rangingRoundUsage(.dsTwrDeferred),
            sts == .fromParameters ? .stsConfig(.staticSTS) : .stsConfig(.provisioned),
            .multiNodeMode(parameters.oneToManySlots == nil ? .unicast : .oneToMany),
            .channel(parameters.channel),
            .numberOfControlees(1),
            .macAddressMode(.short),
            .deviceMacAddress(.short(own)),
            .dstMacAddresses([.short(peer)]),
            .slotDuration(rstu: profile.slotDurationRSTU),
            .rangingDuration(milliseconds: UInt32(parameters.rangingIntervalMilliseconds)),
            .slotsPerRangingRound(parameters.oneToManySlots ?? profile.slotsPerRangingRound),
            .preambleCodeIndex(parameters.preambleCodeIndex),
            .sfdID(2),
            .rframeConfig(3),
        ] + stsTLVs(parameters, sts) + [.scheduleMode(1), .hoppingMode(0)]
    }

    private func stsTLVs(_ parameters: PeerMessage.RangingParameters, _ sts: SessionSTS) -> [AppConfigTLV] {
        switch sts {
        case .fromParameters: [.vendorID(parameters.vendorID), .staticSTSIV(parameters.staticSTSIV)]
        case .provisioned(let key): [.sessionKey(key)]
        }
    }

    /// What each round reports: time of flight, and with `angles` the azimuth and figures of
    /// merit (RESULT_REPORT_CONFIG bits 0, 1 and 3); the received level where the board's
    /// measurements carry one (RSSI_REPORTING 1, UCI 2.0: the range-bias correction and the bump
    /// decision use it; a UCI 1.1 board does not know the parameter); a notification per round.
    func reportTLVs(angles: Bool, board: BoardDescription?) -> [AppConfigTLV] {
        [.aoaResultRequest(angles ? 1 : 0), .resultReportConfig(angles ? 0x0B : 0x01)]
            + (board?.reportsRSSI != false ? [.rssiReporting(1)] : []) + [.rangeDataNotificationConfig(1)]
    }
}

/// Qorvo's FiRa UCI firmware (QM33 SDK on the DWM3001CDK). Asks for angles and reports them with
/// their figures of merit, as Qorvo's own `run_fira_twr` does, also where the board does not say
/// (single-antenna boards then report a figure of merit of 0: no direction;
/// firmware-notes/dwm3001cdk.md); a board whose SUPPORTED_AOA says none gets time of flight only.
/// Brought up the standard FiRa way.
package struct QorvoDialect: UWBDialect {
    package init() {}

    package func appConfig(
        for parameters: PeerMessage.RangingParameters, asController: Bool, sts: SessionSTS, profile: UWBProfile,
        board: BoardDescription?
    ) -> [AppConfigTLV] {
        sessionTLVs(for: parameters, asController: asController, sts: sts, profile: profile)
            + reportTLVs(angles: board?.measuresAngles != false, board: board)
    }
}

/// Plain FiRa UCI as an AOSP host drives it (and Google's pica emulates it): angles are asked for
/// only of a board whose capabilities say it measures them; otherwise time of flight only.
package struct FiRaDialect: UWBDialect {
    package init() {}

    package func appConfig(
        for parameters: PeerMessage.RangingParameters, asController: Bool, sts: SessionSTS, profile: UWBProfile,
        board: BoardDescription?
    ) -> [AppConfigTLV] {
        sessionTLVs(for: parameters, asController: asController, sts: sts, profile: profile)
            + reportTLVs(angles: board?.measuresAngles == true, board: board)
    }
}
