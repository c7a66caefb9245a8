/// One message of the accessory protocol: an id octet, then the payload (the configuration blobs
/// are little-endian inside; the other messages carry nothing). The GATT characteristic or UART
/// write that carries it is the transport's business; one write is one message.
///
/// Parsing is strict: a message that should be bare but carries octets, a blob message without
/// its blob, or a blob longer than its one-octet length field could describe are errors, so that
/// a confused or hostile peer gets a reason rather than a session.
package enum AccessoryMessage: Equatable, Sendable {
    case initialize
    /// The phone's shareable configuration data, unparsed (`ShareableConfiguration` reads it).
    case configureAndStart(shareableConfiguration: [UInt8])
    case stop
    /// The accessory configuration data (`AccessoryConfigurationData.encoded`).
    case accessoryConfigurationData([UInt8])
    case uwbDidStart
    case uwbDidStop

    /// The longest blob either side sends: both configuration layouts end in a one-octet length
    /// field after a header of at most 16 octets, so 16 + 255 octets bound them.
    package static let maxPayloadSize = 16 + 255

    package var id: AccessoryMessageID {
        switch self {
        case .initialize: .initialize
        case .configureAndStart: .configureAndStart
        case .stop: .stop
        case .accessoryConfigurationData: .accessoryConfigurationData
        case .uwbDidStart: .uwbDidStart
        case .uwbDidStop: .uwbDidStop
        }
    }

    /// The message's octets: its id, then its payload.
    package var encoded: [UInt8] {
        switch self {
        case .initialize, .stop, .uwbDidStart, .uwbDidStop: [id.rawValue]
        case .configureAndStart(let blob), .accessoryConfigurationData(let blob): [id.rawValue] + blob
        }
    }

    /// Reads one whole message; any input gets a message or an `AccessoryMessageError`.
    package init(_ bytes: some Collection<UInt8>) throws(AccessoryMessageError) {
        guard let first = bytes.first else { throw .empty }
        guard let id = AccessoryMessageID(rawValue: first) else { throw .unknownID(first) }
        let payload = bytes.dropFirst()
        if let bare = Self.bare(id) {
            guard payload.isEmpty else { throw .unexpectedPayload(id, size: payload.count) }
            self = bare
            return
        }
        guard !payload.isEmpty else { throw .missingPayload(id) }
        guard payload.count <= Self.maxPayloadSize else {
            throw .payloadTooLarge(id, size: payload.count, limit: Self.maxPayloadSize)
        }
        // Copied only once its size is known to be one a blob can have.
        let blob = Array(payload)
        self = id == .configureAndStart ? .configureAndStart(shareableConfiguration: blob) : .accessoryConfigurationData(blob)
    }

    /// The message `id` names when it carries nothing; nil for the two that carry a blob.
    private static func bare(_ id: AccessoryMessageID) -> AccessoryMessage? {
        switch id {
        case .initialize: .initialize
        case .stop: .stop
        case .uwbDidStart: .uwbDidStart
        case .uwbDidStop: .uwbDidStop
        case .configureAndStart, .accessoryConfigurationData: nil
        }
    }
}
