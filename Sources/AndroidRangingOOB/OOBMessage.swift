import ByteCoding

/// One message of Android's ranging out-of-band exchange (source.android.com, "Ranging:
/// Out-of-band message sequence and payload specification", versions 1-3, and Google's PDL
/// definition of it, `oob_packets.pdl` in AOSP's packages/modules/Uwb, ranging/service/oob):
/// version (1), message id (1), payload, multi-octet numbers little-endian. The spec defines the
/// messages, not the transport; one transport write is one message.
///
/// The header is version first, then id, as the spec and the PDL's `OobMessage` have it; an
/// older AOSP `MessageType` read the id from octet 0 and had no version. Parsing is strict: an
/// unknown version or id, a bitmap with unassigned bits, blocks that do not match their bitmap, a
/// block whose size octet disagrees with its layout, a short message or octets after the end are
/// each an `OOBMessageError` naming the reason, so that a confused or hostile phone gets a refusal
/// with a log line rather than a session.
package struct OOBMessage: Equatable, Sendable {
    package var version: OOBVersion
    package var payload: OOBPayload

    package init(version: OOBVersion, _ payload: OOBPayload) {
        self.version = version
        self.payload = payload
    }

    package var id: OOBMessageID { payload.id }

    /// The message's octets, laid out for `version` (fields a version lacks are not written).
    package var encoded: [UInt8] {
        var octets = [version.rawValue, id.rawValue]
        switch payload {
        case .capabilityRequest(let set), .configurationResponse(let set), .stopRanging(let set), .stopRangingResponse(let set):
            octets.appendLE(set.rawValue)
        case .capabilityResponse(let response):
            octets.appendLE(response.supported.rawValue)
            for capability in response.capabilities { octets += capability.encoded }
            if version >= .v2 {
                octets.append(response.transitioning.rawValue)
                octets.appendLE(response.deviceType)
            }
        case .configuration(let configuration):
            octets.appendLE(configuration.toConfigure.rawValue)
            octets.appendLE(configuration.toStart.rawValue)
            for block in configuration.configurations { octets += block.encoded }
            if version >= .v3 { octets.append(configuration.motionSupported ? 1 : 0) }
        case .motionNotification(let motion):
            octets.append(motion.rawValue)
        }
        return octets
    }

    /// Reads one whole message; any input gets a message or an `OOBMessageError`.
    package init(_ bytes: some Collection<UInt8>) throws(OOBMessageError) {
        var reader = LittleEndianReader<OOBMessageError>(bytes, context: "OOB message")
        let versionOctet = try reader.u8("version")
        guard let version = OOBVersion(rawValue: versionOctet) else { throw .unsupportedVersion(versionOctet) }
        let idOctet = try reader.u8("message id")
        guard let id = OOBMessageID(rawValue: idOctet) else { throw .unknownMessageID(idOctet) }
        guard version >= id.introduced else { throw .notInVersion(id, version) }
        reader = LittleEndianReader(Array(bytes.dropFirst(2)), context: id.description)
        self.version = version
        switch id {
        case .capabilityRequest: payload = .capabilityRequest(try Self.technologies(&reader, "requested technologies"))
        case .configurationResponse: payload = .configurationResponse(try Self.technologies(&reader, "configured technologies"))
        case .stopRanging: payload = .stopRanging(try Self.technologies(&reader, "technologies to stop"))
        case .stopRangingResponse: payload = .stopRangingResponse(try Self.technologies(&reader, "stopped technologies"))
        case .capabilityResponse:
            let supported = try Self.technologies(&reader, "supported technologies")
            let blocks = try TechnologyBlocks.read(&reader, leaving: CapabilityResponse.trailingSize(version), expected: supported)
            var capabilities: [TechnologyCapability] = []
            for (technology, body) in blocks { capabilities.append(try TechnologyCapability(technology, body: body)) }
            var response = CapabilityResponse(capabilities: capabilities)
            if version >= .v2 {
                let octet = try reader.u8("technology transitioning")
                guard let transitioning = TechnologyTransitioning(rawValue: octet) else {
                    throw .invalidValue(field: "technology transitioning", value: octet)
                }
                response.transitioning = transitioning
                response.deviceType = try reader.u16("device type")
            }
            payload = .capabilityResponse(response)
        case .configuration:
            let toConfigure = try Self.technologies(&reader, "technologies to configure")
            let toStart = try Self.technologies(&reader, "technologies to start")
            guard toConfigure.isSuperset(of: toStart) else { throw .startsUnconfigured(toStart.subtracting(toConfigure)) }
            let blocks = try TechnologyBlocks.read(&reader, leaving: RangingConfiguration.trailingSize(version), expected: toConfigure)
            var configurations: [TechnologyConfiguration] = []
            for (technology, body) in blocks { configurations.append(try TechnologyConfiguration(technology, body: body)) }
            var configuration = RangingConfiguration(configurations: configurations, toStart: toStart)
            if version >= .v3 {
                let octet = try reader.u8("motion support")
                guard octet <= 1 else { throw .invalidValue(field: "motion support", value: octet) }
                configuration.motionSupported = octet == 1
            }
            payload = .configuration(configuration)
        case .motionNotification:
            let octet = try reader.u8("motion")
            guard let motion = Motion(rawValue: octet) else { throw .invalidValue(field: "motion", value: octet) }
            payload = .motionNotification(motion)
        }
        guard reader.remaining == 0 else { throw .trailingOctets(id, count: reader.remaining) }
    }

    /// A 2-octet bitmap with only assigned bits.
    private static func technologies(
        _ reader: inout LittleEndianReader<OOBMessageError>, _ field: String
    ) throws(OOBMessageError) -> RangingTechnologySet {
        let set = RangingTechnologySet(rawValue: try reader.u16(field))
        guard RangingTechnologySet.assigned.isSuperset(of: set) else { throw .reservedBits(field: field, value: set.rawValue) }
        return set
    }
}
