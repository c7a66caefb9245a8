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
        for parameters: PeerMessage.RangingParameters, asController: Bool, sts: SessionSTS, hops: Bool, profile: UWBProfile,
        board: BoardDescription?
    ) -> [AppConfigTLV]
    /// What each round of any session on `board` reports (`reportTLVs`), the part of the app
    /// config a session the bridge did not design (a phone's) gets from the dialect.
    func reports(board: BoardDescription?) -> [AppConfigTLV]
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
    /// agreed out of band, or provisioned with the derived session key), addresses, channel,
    /// timing and round hopping (firmware-notes/uci-config.md).
    func sessionTLVs(
        for parameters: PeerMessage.RangingParameters, asController: Bool, sts: SessionSTS, hops: Bool, profile: UWBProfile
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
        ] + stsTLVs(parameters, sts) + [.scheduleMode(1), .hoppingMode(hops ? 1 : 0)]
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
