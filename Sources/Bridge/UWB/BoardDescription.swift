import PeerProtocol
import UCI
import UCIHost

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

    /// Whether it does FiRa round hopping: its capabilities' HOPPING_MODE octet is 1 (AOSP
    /// `SUPPORTED_HOPPING_MODE`). A board that does not say does not hop.
    package var supportsRoundHopping: Bool { capability(.hoppingMode) == [1] }

    /// Whether its range notifications carry the received level: UCI 2.0 has an RSSI octet in
    /// each measurement (when RSSI_REPORTING asks for it); in 1.1 that octet is RFU.
    package var reportsRSSI: Bool { info.uciVersion.major >= 2 }

    /// Ranging sessions it runs at once, from its capabilities (nil if it does not say).
    package var maxRangingSessions: Int? { Capabilities.maxRangingSessions(in: capabilities) }

    /// What the peer protocol needs that the board's capabilities say it cannot do, one sentence
    /// each (empty when it can range with peers, or does not say): the peers' channel, their
    /// preamble codes' PRF (codes 9-12 are BPRF, 25-32 HPRF: the board must list some parameter
    /// set of that PRF), DS-TWR deferred (RANGING_METHOD bit 2), unicast sessions
    /// (MULTI_NODE_MODES bit 0), static STS (STS_CONFIG bit 0: every peer without provisioned
    /// STS uses it), and both roles (DEVICE_ROLES bits 0 and 1: which side initiates depends on
    /// the peer ids).
    package func unmetNeeds(channel: UInt8, preambleCodes: [UInt8]) -> [String] {
        var unmet: [String] = []
        if let channels = supportedChannels, !channels.contains(channel) {
            let list = channels.map(String.init).joined(separator: ",")
            unmet.append("the board does not support UWB channel \(channel), which the peers range on (it reports channels \(list))")
        }
        let fields: [(Capabilities.Field, String, ClosedRange<UInt8>)] = [(.bprfParameterSets, "BPRF", 9...12), (.hprfParameterSets, "HPRF", 25...32)]
        for (field, name, range) in fields {
            let codes = preambleCodes.filter(range.contains)
            if !codes.isEmpty, let sets = capability(field), !sets.contains(where: { $0 != 0 }) {
                let list = codes.map(String.init).joined(separator: ", ")
                unmet.append("the board does not support \(name), which the peers' preamble codes \(list) need")
            }
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
